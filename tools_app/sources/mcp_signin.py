"""MCP servers that sign in with their own OAuth (the MCP authorization spec).

When a server refuses the studio with a 401 and the source has no static Authorization
header, the studio discovers the server's authorization server and client
(tools_app.sources.mcp_oauth) and keeps them on the source: the auth config in
`config.auth`, what was found in `config.oauth`, the client id and secret encrypted with
the source's headers. Each user then connects their own account (tools_app.auth.connect,
/oauth/sources/<id>/connect); their token is kept per (user, source) by
tools_app.auth.store and refreshed by tools_app.auth.resolver.ToolAuth, which also turns a
missing connection or a refused token into the "connect" errors the user sees.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from asgiref.sync import async_to_sync

from common.exceptions import ApplicationError
from tools_app.auth.grants import AuthError
from tools_app.models import ToolSource
from tools_app.sources import mcp_oauth
from tools_app.sources.mcp_client import McpFailure, mcp_list_tools

SOURCES_PAGE = "/sources/"


def signs_in(source: ToolSource | None) -> bool:
    return bool(source is not None and (source.config or {}).get("auth"))


def has_authorization(headers: dict[str, str]) -> bool:
    return any(name.lower() == "authorization" for name in headers)


def unreachable(exc: McpFailure) -> ApplicationError:
    return ApplicationError(
        str(exc), code="mcp_unreachable", extra={"errors": [{"path": "$.url", "message": str(exc)}]}
    )


async def as_user(
    source: ToolSource,
    user: Any,
    headers: dict[str, str],
    call: Callable[[dict[str, str]], Awaitable[Any]],
) -> Any:
    """`call(headers)` with the user's bearer token for the source; after a 401 the token
    is refreshed once and the call sent again; a second 401 forgets the token and asks
    the user to connect again (AuthError, a ToolError)."""
    from tools_app.auth.connect import source_auth, source_client
    from tools_app.auth.resolver import ToolAuth

    tool_auth = ToolAuth(
        None, source_auth(source), source_client(source), user, source=source, page=SOURCES_PAGE
    )
    request: dict[str, Any] = {"headers": dict(headers)}
    await tool_auth.apply(request)
    try:
        return await call(request["headers"])
    except McpFailure as exc:
        if exc.status != 401 or not await tool_auth.renew():
            raise
    request = {"headers": dict(headers)}
    await tool_auth.apply(request)
    try:
        return await call(request["headers"])
    except McpFailure as exc:
        if exc.status == 401:
            await tool_auth.after_refusal()
        raise


def tools_or_signin(
    *,
    url: str,
    transport: str,
    headers: dict[str, str],
    redirect_uri: str,
    client: dict[str, str] | None = None,
    source: ToolSource | None = None,
    user: Any = None,
) -> tuple[list[dict[str, Any]], dict[str, Any] | None]:
    """The server's tools (listed as `user` when the source signs in with OAuth), and
    None; or, when the server asks for OAuth the source does not have yet, no tools and
    the sign-in found by discovery ({auth, client, oauth})."""

    async def listing(sent: dict[str, str]) -> list[dict[str, Any]]:
        return await mcp_list_tools(url=url, transport=transport, headers=sent)

    if signs_in(source):
        assert source is not None
        try:
            return async_to_sync(as_user)(source, user, headers, listing), None
        except AuthError as exc:
            raise ApplicationError(str(exc), code=exc.code, status_code=409) from None
        except McpFailure as exc:
            raise unreachable(exc) from None
    try:
        return async_to_sync(listing)(headers), None
    except McpFailure as exc:
        if exc.status != 401 or has_authorization(headers):
            raise unreachable(exc) from None
        challenge = exc.challenge
    auth, secrets, found = async_to_sync(mcp_oauth.discover)(
        url=url, challenge_header=challenge, redirect_uri=redirect_uri, client=client
    )
    return [], {"auth": auth, "client": secrets, "oauth": found}


def signin_keep(source: ToolSource, signin: dict[str, Any], headers: dict[str, str]) -> None:
    """Store a discovered sign-in on the source (its client encrypted with the headers)."""
    from tools_app.sources.common import set_credentials

    source.config = {**source.config, "auth": signin["auth"], "oauth": signin["oauth"]}
    set_credentials(source, {"headers": headers, **signin["client"]})
    source.save()
