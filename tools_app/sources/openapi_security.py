"""OpenAPI security schemes as tools_app.auth configs: API keys (header, query, cookie),
HTTP basic and bearer, OAuth 2.0 (authorization code with PKCE, client credentials;
Swagger 2.0's accessCode and application flows), mutual TLS (OpenAPI 3.1) and OpenID
Connect (its discovery document is read at import: tools_app.sources.openapi).

The implicit and password flows are not offered (deprecated by the OAuth 2.0 Security
BCP); a requirement that needs one is skipped for the next.
"""

from __future__ import annotations

import re
from typing import Any
from urllib.parse import urljoin


def security_auth(
    document: dict[str, Any], op: dict[str, Any], version: str, base_url: str = ""
) -> dict | None:
    """The first security requirement the studio can satisfy, as a tools_app.auth config
    (relative OAuth URLs resolved against the API's base URL)."""
    schemes = (
        document.get("securityDefinitions")
        if version == "2.0"
        else (document.get("components") or {}).get("securitySchemes")
    ) or {}
    requirements = op.get("security", document.get("security")) or []
    for requirement in requirements:
        auth: dict[str, Any] | None = {"type": "none"}
        for name, scopes in (requirement or {}).items():
            mapped = scheme_auth(schemes.get(name) or {}, name, scopes or [])
            if mapped is None:
                auth = None
                break
            if mapped.get("mutual_tls"):
                auth = {**auth, "mutual_tls": True}
            elif auth.get("type") == "none":  # one credential scheme per tool: the first
                auth = {**mapped, **({"mutual_tls": True} if auth.get("mutual_tls") else {})}
        if auth is not None and (auth["type"] != "none" or auth.get("mutual_tls")):
            for key in ("authorization_url", "token_url"):
                if auth.get(key) and not re.match(r"^https?://", auth[key]):
                    auth[key] = urljoin(base_url.rstrip("/") + "/", auth[key])
            return auth
    return None


def scheme_auth(scheme: dict[str, Any], name: str, scopes: list[str]) -> dict | None:
    """One security scheme (OpenAPI 3.x or Swagger 2.0) as a tools_app.auth config; None
    for what the studio cannot do (the implicit and password flows)."""
    kind = scheme.get("type")
    http_scheme = str(scheme.get("scheme", "")).lower()
    if kind == "apiKey" and scheme.get("in") in ("header", "query", "cookie"):
        return {
            "type": "api_key",
            "in": scheme["in"],
            "name": scheme.get("name", ""),
            "scheme": name,
        }
    if kind == "basic" or (kind == "http" and http_scheme == "basic"):
        return {"type": "basic", "scheme": name}
    if kind == "http" and http_scheme == "bearer":
        return {"type": "bearer", "scheme": name}
    if kind == "mutualTLS":
        return {"type": "none", "mutual_tls": True, "scheme": name}
    if kind == "oauth2":
        return _oauth2_auth(scheme, name, scopes)
    if kind == "openIdConnect":
        # Completed from the discovery document at import (openapi_import); until then a
        # token pasted by the user works.
        return {
            "type": "bearer",
            "scheme": name,
            "openid_url": scheme.get("openIdConnectUrl", ""),
            "scopes": list(scopes),
        }
    return None


def _oauth2_auth(scheme: dict[str, Any], name: str, scopes: list[str]) -> dict | None:
    flows = scheme.get("flows") or {}
    if "flow" in scheme:  # Swagger 2.0: one flow per scheme
        flows = {
            {"accessCode": "authorizationCode", "application": "clientCredentials"}.get(
                scheme["flow"], scheme["flow"]
            ): scheme
        }
    code, client = flows.get("authorizationCode"), flows.get("clientCredentials")
    # The authorization code acts for the user who connects; prefer it when offered.
    if code and code.get("authorizationUrl") and code.get("tokenUrl"):
        auth = {
            "type": "oauth2_authorization_code",
            "authorization_url": code["authorizationUrl"],
            "token_url": code["tokenUrl"],
        }
        flow = code
    elif client and client.get("tokenUrl"):
        auth = {"type": "oauth2_client_credentials", "token_url": client["tokenUrl"]}
        flow = client
    else:
        return None
    auth["scopes"] = list(scopes) or sorted(flow.get("scopes") or {})
    auth["scheme"] = name
    return auth


async def openid_completed(auth: dict[str, Any]) -> dict[str, Any]:
    """An OpenID Connect scheme as the authorization code flow, with the endpoints of its
    discovery document (fetched through the address guard); unchanged (a pasted bearer
    token) when the document cannot be read or lacks the endpoints."""
    import json

    from common.exceptions import ApplicationError
    from tools_app.sources.common import fetch_text

    try:
        discovery = json.loads(await fetch_text(auth["openid_url"], max_bytes=200_000))
    except (ApplicationError, ValueError):
        return auth
    if not isinstance(discovery, dict):
        return auth
    endpoints = {
        "authorization_url": discovery.get("authorization_endpoint"),
        "token_url": discovery.get("token_endpoint"),
        "revocation_url": discovery.get("revocation_endpoint"),
    }
    if not all(isinstance(endpoints[k], str) for k in ("authorization_url", "token_url")):
        return auth
    scopes = auth.get("scopes") or ["openid"]
    return {
        **{k: v for k, v in auth.items() if k != "type"},
        "type": "oauth2_authorization_code",
        **{k: v for k, v in endpoints.items() if isinstance(v, str)},
        "scopes": scopes,
    }
