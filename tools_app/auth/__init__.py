"""Authentication of HTTP-based tools and sources: one module, used by the HTTP and
OpenAPI tool types, the OpenAPI importer and the connectors built on them.

The API other code uses:
- `AUTH_SCHEMA`, `AUTH_TYPES`, `CREDENTIAL_FIELDS`, `SECRETS`: the `config.auth` JSON
  Schema, its `type`s and the secrets each type reads (tools_app.auth.schema);
- `auth_config_errors(auth)`, `credentials_errors(auth, credentials)`: {JSON path: message}
  for a config or a set of secrets (missing fields, unreadable PEM);
- `auth_fetch(tool, request, context, **fetch_kwargs)`: send one request with the tool's
  auth and TLS material through the address guard (tools_app.auth.resolver);
- the connect flow of the authorization code grant (tools_app.auth.connect).

docs/tools.md ("Authentication") describes the config and the flows.
"""

from __future__ import annotations

from tools_app.auth.schema import (
    AUTH_SCHEMA,
    AUTH_TYPES,
    CREDENTIAL_FIELDS,
    OAUTH_TYPES,
    SECRETS,
    TLS_FIELDS,
    auth_config_errors,
    auth_type,
    credentials_errors,
)

__all__ = [
    "AUTH_SCHEMA",
    "AUTH_TYPES",
    "CREDENTIAL_FIELDS",
    "OAUTH_TYPES",
    "SECRETS",
    "TLS_FIELDS",
    "auth_config_errors",
    "auth_type",
    "credentials_errors",
]
