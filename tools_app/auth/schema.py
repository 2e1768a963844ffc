"""The auth config every HTTP-based tool and source shares: its JSON Schema, which secrets
each type needs, and the checks that name each problem at its JSON path.

A tool keeps the non-secret part in `config.auth` and the secrets in its encrypted
credentials (tools_app.crypto):

    config.auth = {"type": "oauth2_client_credentials",
                   "token_url": "https://login.example.com/oauth/token",
                   "scopes": ["read"], "audience": "https://api.example.com"}
    credentials = {"client_id": "...", "client_secret": "...",
                   "client_cert": "<PEM>", "client_key": "<PEM>", "ca_bundle": "<PEM>"}

The TLS material (`client_cert` + `client_key` for mutual TLS, `ca_bundle` for a private
CA) is accepted with every type, `none` included.
"""

from __future__ import annotations

from typing import Any

AUTH_TYPES = (
    "none",
    "bearer",
    "api_key",
    "basic",
    "oauth2_client_credentials",
    "oauth2_authorization_code",
    "jwt_bearer",
)
OAUTH_TYPES = ("oauth2_client_credentials", "oauth2_authorization_code", "jwt_bearer")
TLS_FIELDS = ("client_cert", "client_key", "ca_bundle")
PEM_FIELDS = ("private_key", *TLS_FIELDS)

# The secrets each type reads; the first list is required, the second optional.
SECRETS: dict[str, tuple[tuple[str, ...], tuple[str, ...]]] = {
    "none": ((), ()),
    "bearer": (("token",), ()),
    "api_key": (("api_key",), ()),
    "basic": (("username",), ("password",)),
    "oauth2_client_credentials": (("client_id", "client_secret"), ()),
    # A public client (PKCE only) has no secret.
    "oauth2_authorization_code": (("client_id",), ("client_secret",)),
    "jwt_bearer": (("private_key",), ("client_id",)),
}
CREDENTIAL_FIELDS = [
    "token",
    "api_key",
    "username",
    "password",
    "client_id",
    "client_secret",
    "private_key",
    *TLS_FIELDS,
]

_URL = {"type": "string", "pattern": "^https?://", "maxLength": 2000}
_SCOPES = {"type": "array", "items": {"type": "string", "minLength": 1}, "maxItems": 100}
_EXTRA = {
    "type": "object",
    "additionalProperties": {"type": "string"},
    "description": "Extra parameters: of the token request (client credentials, JWT "
    "bearer; e.g. resource), or of the authorization URL (authorization code; e.g. "
    "prompt, access_type).",
}

AUTH_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "type": {
            "enum": list(AUTH_TYPES),
            "description": "How the tool authenticates; the credentials each type reads are "
            "listed in docs/tools.md (Authentication).",
        },
        # api_key: where the key goes and under which name.
        "in": {"enum": ["header", "query", "cookie"]},
        "name": {"type": "string", "maxLength": 200},
        "header_name": {"type": "string", "maxLength": 200, "description": "For api_key."},
        # The security scheme of the spec this came from (OpenAPI import).
        "scheme": {"type": "string"},
        # OAuth 2.0 and JWT bearer.
        "token_url": {**_URL, "description": "OAuth 2.0 / JWT bearer token endpoint."},
        "authorization_url": {**_URL, "description": "Authorization code: where Connect goes."},
        "revocation_url": {**_URL, "description": "RFC 7009 endpoint Disconnect calls."},
        "scopes": _SCOPES,
        "audience": {"type": "string", "maxLength": 2000},
        "extra_params": _EXTRA,
        "resource": {
            **_URL,
            "description": "RFC 8707 resource indicator, sent with the authorization, the "
            "code exchange and every refresh (an MCP server's own URL).",
        },
        "client_auth": {
            "enum": ["client_secret_basic", "client_secret_post"],
            "description": "How the client id and secret reach the token endpoint.",
        },
        # JWT bearer (RFC 7523): the assertion's claims and signing algorithm.
        "issuer": {"type": "string", "maxLength": 2000},
        "subject": {"type": "string", "maxLength": 2000},
        "alg": {"enum": ["RS256", "RS384", "RS512", "ES256", "ES384", "PS256"]},
        "claims": {"type": "object", "description": "Extra claims of the assertion."},
        # The API asks for a client certificate (OpenAPI mutualTLS): client_cert and
        # client_key become required credentials.
        "mutual_tls": {"type": "boolean"},
        # OpenID Connect discovery document the OAuth URLs were read from.
        "openid_url": {"type": "string", "maxLength": 2000},
    },
    "additionalProperties": False,
}

# Each type's required config keys.
_REQUIRED_CONFIG = {
    "oauth2_client_credentials": ("token_url",),
    "oauth2_authorization_code": ("authorization_url", "token_url"),
    "jwt_bearer": ("token_url", "issuer"),
}


def auth_type(auth: dict[str, Any] | None) -> str:
    return (auth or {}).get("type") or "none"


def auth_config_errors(auth: Any, *, path: str = "config.auth") -> dict[str, str]:
    """{JSON path: message} for what the schema alone cannot say (per-type required keys)."""
    if not isinstance(auth, dict):
        return {}
    errors = {}
    for key in _REQUIRED_CONFIG.get(auth_type(auth), ()):
        if not auth.get(key):
            errors[f"{path}.{key}"] = f"{auth_type(auth)} needs {key}."
    return errors


def credentials_errors(
    auth: dict[str, Any] | None, credentials: dict[str, Any], *, path: str = "credentials"
) -> dict[str, str]:
    """{JSON path: message} for secrets that are missing or not readable PEM."""
    from tools_app.auth.pem import pair_problem, pem_problem

    errors = {}
    required, _ = SECRETS.get(auth_type(auth), ((), ()))
    if (auth or {}).get("mutual_tls"):
        required = (*required, "client_cert", "client_key")
    for key in required:
        if not credentials.get(key):
            errors[f"{path}.{key}"] = f"{auth_type(auth)} needs {key}."
    for key in PEM_FIELDS:
        if credentials.get(key):
            problem = pem_problem(key, credentials[key])
            if problem:
                errors[f"{path}.{key}"] = problem
    if bool(credentials.get("client_cert")) != bool(credentials.get("client_key")):
        missing = "client_key" if credentials.get("client_cert") else "client_cert"
        errors[f"{path}.{missing}"] = "Mutual TLS needs both client_cert and client_key."
    elif credentials.get("client_cert") and not errors:
        problem = pair_problem(credentials["client_cert"], credentials["client_key"])
        if problem:
            errors[f"{path}.client_key"] = problem
    return errors
