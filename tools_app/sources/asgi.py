"""The ASGI router studio/asgi.py puts in front of Django: /mcp/ goes to the studio's MCP
server, /a2a/ to its A2A endpoints, everything else to Django.

Both speak through Starlette apps of their SDKs, so they sit beside Django rather than
inside a view. They authenticate the same way as the REST API's token auth:
`Authorization: Token <key>` (or `Bearer <key>`), a DRF token of an active user; the
Host header is checked against ALLOWED_HOSTS as Django would.
"""

from __future__ import annotations

import asyncio
import importlib
import json
import sys
from typing import Any

from channels.db import database_sync_to_async
from django.conf import settings
from django.http.request import split_domain_port, validate_host

MCP_PREFIX = "/mcp"
A2A_PREFIX = "/a2a/"


@database_sync_to_async
def _user_for_token(key: str) -> Any:
    from rest_framework.authtoken.models import Token

    token = Token.objects.select_related("user").filter(key=key).first()
    return token.user if token and token.user.is_active else None


def _header(scope: dict[str, Any], name: bytes) -> str:
    for key, value in scope.get("headers", []):
        if key == name:
            return value.decode("latin-1")
    return ""


async def authenticate(scope: dict[str, Any]) -> Any:
    """The user of a `Token <key>` / `Bearer <key>` Authorization header, or None."""
    scheme, _, key = _header(scope, b"authorization").partition(" ")
    if scheme.lower() not in ("token", "bearer") or not key.strip():
        return None
    return await _user_for_token(key.strip())


def host_allowed(scope: dict[str, Any]) -> bool:
    domain, _port = split_domain_port(_header(scope, b"host"))
    allowed = settings.ALLOWED_HOSTS or (
        ["localhost", "127.0.0.1", "[::1]"] if settings.DEBUG else []
    )
    return bool(domain) and validate_host(domain, allowed)


async def respond_json(
    send: Any, status: int, body: dict[str, Any], headers: list[tuple[bytes, bytes]] | None = None
) -> None:
    payload = json.dumps(body).encode()
    await send(
        {
            "type": "http.response.start",
            "status": status,
            "headers": [
                (b"content-type", b"application/json"),
                (b"content-length", str(len(payload)).encode()),
                *(headers or []),
            ],
        }
    )
    await send({"type": "http.response.body", "body": payload})


async def guarded(scope: dict[str, Any], send: Any) -> Any:
    """The authenticated user, or None after answering 400/401 itself."""
    if not host_allowed(scope):
        await respond_json(send, 400, {"detail": "Invalid Host header."})
        return None
    user = await authenticate(scope)
    if user is None:
        await respond_json(
            send,
            401,
            {
                "detail": "Authentication credentials were not provided "
                "or are invalid: send 'Authorization: Token <key>'."
            },
            [(b"www-authenticate", b'Token realm="api"')],
        )
    return user


# The SDKs take seconds to import. Importing them inside a request would stall the whole
# event loop (every other request and websocket of the process), so the first request
# that needs them imports them in a worker thread and awaits it. (Not at startup: that
# would slow down every process's first pages for endpoints most never serve.)
_SDK_MODULES = {
    "mcp": [
        "mcp_types",
        "mcp.server",
        "mcp.server.streamable_http_manager",
        "tools_app.sources.mcp_server",
    ],
    "a2a": [
        "a2a.helpers",
        "a2a.server.request_handlers",
        "a2a.server.routes",
        "a2a.server.tasks",
        "a2a.server.agent_execution",
        "tools_app.sources.a2a_server",
    ],
}


def _import_sdk(name: str) -> Any:
    for module in _SDK_MODULES[name]:
        importlib.import_module(module)
    return sys.modules[_SDK_MODULES[name][-1]]


class SourcesRouter:
    """Routes the MCP and A2A prefixes to their apps; everything else to `app`."""

    def __init__(self, app: Any) -> None:
        self.app = app

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] == "http":
            path = scope["path"]
            if path == MCP_PREFIX or path.startswith(MCP_PREFIX + "/"):
                module = await asyncio.to_thread(_import_sdk, "mcp")
                return await module.mcp_asgi(scope, receive, send)
            if path.startswith(A2A_PREFIX):
                module = await asyncio.to_thread(_import_sdk, "a2a")
                return await module.a2a_asgi(scope, receive, send)
        return await self.app(scope, receive, send)
