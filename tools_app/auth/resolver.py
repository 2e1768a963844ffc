"""One request of an HTTP-based tool, authenticated: the resolver the HTTP and OpenAPI
types (and the connectors built on them) call instead of tools_app.net.fetch.

It reads the tool's auth config and decrypted secrets, builds the TLS context (private CA,
client certificate), adds the credentials or a token (cached, refreshed a minute before
it expires), sends the request through the address guard, and on a 401 from the API
renews an OAuth token once and sends the request again.
"""

from __future__ import annotations

import inspect
import ssl
import time
from typing import Any

from asgiref.sync import sync_to_async

from tools_app.auth import grants, store
from tools_app.auth.grants import AuthError
from tools_app.auth.pem import ssl_context
from tools_app.auth.schema import OAUTH_TYPES, auth_type
from tools_app.auth.static import apply_static
from tools_app.net import FetchResult, fetch
from tools_app.redaction import secrets_add

REFRESH_LEEWAY_SECONDS = 60


async def tool_secrets(tool: Any, context: Any) -> dict[str, Any]:
    """The tool's decrypted credentials (the context's getter first: tests, runners)."""
    if not tool.credentials_encrypted:
        return {}
    getter = getattr(context, "credentials", None)
    if getter is None:
        from tools_app.crypto import credentials_get

        return await sync_to_async(credentials_get)(tool)
    result = getter(tool)
    return (await result if inspect.isawaitable(result) else result) or {}


def _expiring(token: dict[str, Any]) -> bool:
    expires_at = token.get("expires_at")
    if not expires_at:
        return False
    return float(expires_at) - REFRESH_LEEWAY_SECONDS <= time.time()


class ToolAuth:
    """The auth of one tool call: `apply` before sending, `renew` after a 401.

    `source`: the tokens are the source's (an MCP server signing in with its own OAuth,
    whose config and client are on the source), and `page` is where the user connects.
    """

    def __init__(
        self,
        tool: Any,
        auth: dict[str, Any],
        secrets: dict[str, Any],
        user: Any,
        *,
        source: Any = None,
        page: str = "",
    ) -> None:
        self.tool, self.auth, self.secrets, self.user = tool, auth, secrets, user
        self.source, self._page = source, page
        self.kind = auth_type(auth)
        self.renewed = False
        self._token: dict[str, Any] | None = None

    @property
    def page(self) -> str:
        return self._page or f"/tools/{self.tool.name}/"

    # --- tokens -------------------------------------------------------------------------
    async def _holder(self, user_id: int | None) -> store.Holder:
        if self.source is not None:
            return store.Holder(tool=None, source=self.source, user_id=user_id)
        return await sync_to_async(store.holder_for)(self.tool, user_id)

    def _digest(self) -> str:
        if self.kind == "oauth2_authorization_code":
            return store.digest(self.auth)
        return store.digest(self.auth, self.tool.credentials_encrypted or "")

    async def _service_token(self, *, fresh: bool) -> dict[str, Any]:
        holder, digest = await self._holder(None), self._digest()
        token = None if fresh else await sync_to_async(store.token_get)(holder, digest)
        if token is None or _expiring(token):
            grant = grants.jwt_bearer if self.kind == "jwt_bearer" else grants.client_credentials
            token = await grant(self.auth, self.secrets)
            await sync_to_async(store.token_put)(holder, digest, token)
        return token

    async def _user_token(self, *, fresh: bool) -> dict[str, Any]:
        """The user's token, refreshed when it is about to expire or (`fresh`) the API
        refused it."""
        if self.user is None or not getattr(self.user, "pk", None):
            raise AuthError(
                "This tool acts for a signed-in user's account, and this call runs for no user.",
                code="no_user",
            )
        holder, digest = await self._holder(self.user.pk), self._digest()
        token = await sync_to_async(store.token_get)(holder, digest)
        if token is None:
            raise AuthError(
                f"Connect your account first: this tool calls the API as you; press "
                f"Connect on {self.page}.",
                code="not_connected",
            )
        if not (fresh or _expiring(token)):
            return token
        if not token.get("refresh_token"):
            await sync_to_async(store.token_delete)(holder)
            why = "the API answered HTTP 401" if fresh else "the access token expired"
            raise AuthError(
                self._reconnect(f"{why}, and there is no refresh token"), code="token_expired"
            )
        try:
            token = await grants.refresh(self.auth, self.secrets, token["refresh_token"])
        except AuthError as exc:
            if exc.code not in ("invalid_grant", "invalid_token", "unauthorized_client"):
                raise
            # A call running at the same time may have refreshed first (servers that
            # rotate refresh tokens refuse the old one): use what it stored.
            current = await sync_to_async(store.token_get)(holder, digest)
            if current and current.get("refresh_token") != token["refresh_token"]:
                return current
            await sync_to_async(store.token_delete)(holder)
            raise AuthError(self._reconnect(str(exc)), code="token_revoked") from None
        await sync_to_async(store.token_put)(holder, digest, token)
        return token

    def _reconnect(self, why: str) -> str:
        return (
            f"Your connection to this API is no longer valid ({why}): it was revoked or "
            f"has expired. Connect again on {self.page}."
        )

    # --- per request --------------------------------------------------------------------
    async def apply(self, request: dict[str, Any]) -> None:
        if self.kind not in OAUTH_TYPES:
            apply_static(request, self.auth, self.secrets)
            return
        if self._token is None:
            self._token = await self._get_token(fresh=False)
        secrets_add(self._token.get("access_token"))  # a fresh one was never decrypted
        request["headers"]["Authorization"] = f"Bearer {self._token['access_token']}"

    async def _get_token(self, *, fresh: bool) -> dict[str, Any]:
        if self.kind == "oauth2_authorization_code":
            return await self._user_token(fresh=fresh)
        return await self._service_token(fresh=fresh)

    async def renew(self) -> bool:
        """After a 401: a new token once per call (True: send again)."""
        if self.kind not in OAUTH_TYPES or self.renewed:
            return False
        self.renewed = True
        self._token = await self._get_token(fresh=True)
        return True

    async def after_refusal(self) -> None:
        """The API refused even a renewed user token: forget it, tell the user."""
        if self.kind == "oauth2_authorization_code" and self.user is not None:
            await sync_to_async(store.token_delete)(await self._holder(self.user.pk))
            raise AuthError(
                self._reconnect("the API answered HTTP 401 to a fresh token"),
                code="token_revoked",
            )


def tls_context(secrets: dict[str, Any]) -> ssl.SSLContext | None:
    try:
        return ssl_context(secrets)
    except (ssl.SSLError, ValueError) as exc:
        raise AuthError(f"The tool's TLS material cannot be used: {exc}", code="bad_tls") from None


async def auth_fetch(
    tool: Any, request: dict[str, Any], context: Any, **fetch_kwargs: Any
) -> FetchResult:
    """Send `request` ({method, url, headers, content}) with the tool's auth and TLS.

    Raises AuthError (a ToolError) for auth problems, and net.BlockedURL / net.FetchError
    as tools_app.net.fetch does.
    """
    auth = (tool.config or {}).get("auth") or {}
    secrets = await tool_secrets(tool, context)
    tool_auth = ToolAuth(tool, auth, secrets, getattr(context, "user", None))
    tls = tls_context(secrets)
    sent = dict(request, headers=dict(request["headers"]))
    await tool_auth.apply(sent)
    result = await _send(sent, tls, fetch_kwargs)
    if result.status == 401 and await tool_auth.renew():
        sent = dict(request, headers=dict(request["headers"]))
        await tool_auth.apply(sent)
        result = await _send(sent, tls, fetch_kwargs)
        if result.status == 401:
            await tool_auth.after_refusal()
    return result


async def _send(
    request: dict[str, Any], tls: ssl.SSLContext | None, kwargs: dict[str, Any]
) -> FetchResult:
    return await fetch(
        request["url"],
        method=request["method"],
        headers=request["headers"],
        content=request["content"],
        ssl_context=tls,
        **kwargs,
    )
