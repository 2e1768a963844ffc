"""The OAuth 2.0 exchanges with an authorization server, through Authlib's httpx client
(on httpx2, as Authlib prefers) pinned by the address guard (tools_app.sources.pinning):
client credentials, JWT bearer (RFC 7523), the authorization code with PKCE (RFC 7636),
refresh and revocation (RFC 7009).

Every function takes the auth config (tools_app.auth.schema) and the decrypted secrets,
returns Authlib's token dict (with `expires_at`), and raises AuthError with the server's
own error code and description when it refuses.
"""

from __future__ import annotations

import ssl
import time
from typing import Any

import httpx2
from authlib.common.security import generate_token
from authlib.integrations.base_client import OAuthError
from authlib.integrations.httpx_client import AsyncOAuth2Client
from authlib.oauth2.rfc7523 import JWTBearerGrant
from joserfc import jwk
from joserfc.errors import JoseError

from tools_app.auth.pem import ssl_context
from tools_app.errors import ToolError
from tools_app.net import BlockedURL, FetchError
from tools_app.sources.pinning import checked_pins, pinned_httpx2_transport

JWT_BEARER_GRANT = "urn:ietf:params:oauth:grant-type:jwt-bearer"
TIMEOUT_SECONDS = 15.0


class AuthError(ToolError):
    """The studio could not obtain or use a token; `code` is the OAuth error code."""

    def __init__(self, message: str, *, code: str = "auth_failed") -> None:
        super().__init__(message)
        self.code = code


async def _client(auth: dict[str, Any], secrets: dict[str, Any], url: str) -> AsyncOAuth2Client:
    """An OAuth client that can reach only `url`'s host, at the address the guard checked,
    with the tool's TLS material (the token endpoint may sit behind the same private CA
    or require the same client certificate as the API)."""
    try:
        pins = await checked_pins(url)
    except (BlockedURL, FetchError) as exc:
        raise AuthError(f"The authorization server {url} is not reachable: {exc}") from None
    return AsyncOAuth2Client(
        client_id=secrets.get("client_id"),
        client_secret=secrets.get("client_secret"),
        token_endpoint_auth_method=auth.get("client_auth")
        or ("client_secret_basic" if secrets.get("client_secret") else "none"),
        scope=" ".join(auth.get("scopes") or []) or None,
        transport=pinned_httpx2_transport(pins, ssl_context(secrets)),
        trust_env=False,
        follow_redirects=False,
        timeout=TIMEOUT_SECONDS,
    )


def _resource(auth: dict[str, Any]) -> dict[str, str]:
    """The RFC 8707 resource indicator, when the config names one (MCP servers)."""
    return {"resource": auth["resource"]} if auth.get("resource") else {}


def _extra(auth: dict[str, Any]) -> dict[str, str]:
    extra = dict(auth.get("extra_params") or {})
    if auth.get("audience"):
        extra.setdefault("audience", auth["audience"])
    return extra


async def _call(what: str, url: str, coroutine: Any) -> dict[str, Any]:
    try:
        token = dict(await coroutine)
    except OAuthError as exc:
        detail = f": {exc.description}" if exc.description else ""
        raise AuthError(f"{what} refused by {url} ({exc.error}{detail})", code=exc.error) from None
    except (httpx2.HTTPError, ssl.SSLError) as exc:
        from tools_app.net.fetch import _tls_hint

        raise AuthError(f"{what} failed: {url}: {exc}{_tls_hint(exc)}") from None
    except ValueError as exc:
        raise AuthError(f"{what}: {url} did not answer a token response ({exc})") from None
    if not token.get("access_token"):
        raise AuthError(f"{what}: {url} answered without an access_token.")
    if token.get("expires_in") and not token.get("expires_at"):
        token["expires_at"] = int(time.time()) + int(token["expires_in"])
    return token


async def client_credentials(auth: dict[str, Any], secrets: dict[str, Any]) -> dict[str, Any]:
    url = auth["token_url"]
    async with await _client(auth, secrets, url) as client:
        request = client.fetch_token(url, grant_type="client_credentials", **_extra(auth))
        return await _call("The client credentials grant", url, request)


async def jwt_bearer(auth: dict[str, Any], secrets: dict[str, Any]) -> dict[str, Any]:
    """Sign an assertion with the private key (Authlib, on joserfc) and trade it for a
    token; `aud` defaults to the token URL (as Google service accounts expect)."""
    url = auth["token_url"]
    alg = auth.get("alg") or "RS256"
    try:
        key_type = jwk.ECKey if alg.startswith("ES") else jwk.RSAKey
        assertion = JWTBearerGrant.sign(
            key_type.import_key(secrets["private_key"]),
            issuer=auth["issuer"],
            audience=auth.get("audience") or url,
            subject=auth.get("subject") or None,
            claims=dict(auth.get("claims") or {}),
            alg=alg,
            expires_in=300,
        )
    except (ValueError, TypeError, JoseError) as exc:
        raise AuthError(f"Cannot sign the JWT assertion with private_key: {exc}") from None
    extra = dict(auth.get("extra_params") or {})
    async with await _client(auth, secrets, url) as client:
        request = client.fetch_token(url, grant_type=JWT_BEARER_GRANT, assertion=assertion, **extra)
        return await _call("The JWT bearer grant", url, request)


async def refresh(
    auth: dict[str, Any], secrets: dict[str, Any], refresh_token: str
) -> dict[str, Any]:
    url = auth["token_url"]
    async with await _client(auth, secrets, url) as client:
        token = await _call(
            "Refreshing the token",
            url,
            client.refresh_token(url, refresh_token=refresh_token, **_resource(auth)),
        )
    token.setdefault("refresh_token", refresh_token)
    return token


def authorization_url(
    auth: dict[str, Any], secrets: dict[str, Any], redirect_uri: str
) -> tuple[str, str, str]:
    """(URL to send the browser to, state, PKCE code verifier); S256 challenge."""
    client = AsyncOAuth2Client(
        client_id=secrets.get("client_id"),
        scope=" ".join(auth.get("scopes") or []) or None,
        redirect_uri=redirect_uri,
        code_challenge_method="S256",
    )
    verifier = generate_token(64)
    url, state = client.create_authorization_url(
        auth["authorization_url"],
        code_verifier=verifier,
        **(auth.get("extra_params") or {}),
        **_resource(auth),
    )
    return url, state, verifier


async def exchange_code(
    auth: dict[str, Any],
    secrets: dict[str, Any],
    *,
    code: str,
    redirect_uri: str,
    code_verifier: str,
) -> dict[str, Any]:
    url = auth["token_url"]
    async with await _client(auth, secrets, url) as client:
        client.redirect_uri = redirect_uri
        request = client.fetch_token(
            url,
            grant_type="authorization_code",
            code=code,
            code_verifier=code_verifier,
            **_resource(auth),
        )
        return await _call("Exchanging the authorization code", url, request)


async def revoke(auth: dict[str, Any], secrets: dict[str, Any], token: dict[str, Any]) -> None:
    """RFC 7009: revoke the refresh token (which ends its access tokens) or the access
    token; a server without a revocation endpoint in the config is not called."""
    url = auth.get("revocation_url")
    if not url:
        return
    value, hint = (
        (token["refresh_token"], "refresh_token")
        if token.get("refresh_token")
        else (token.get("access_token"), "access_token")
    )
    async with await _client(auth, secrets, url) as client:
        try:
            response = await client.revoke_token(url, token=value, token_type_hint=hint)
        except (httpx2.HTTPError, ssl.SSLError) as exc:
            raise AuthError(f"Revocation failed: {url}: {exc}") from None
    if response.status_code != 200:
        raise AuthError(f"Revocation refused by {url}: HTTP {response.status_code}")
