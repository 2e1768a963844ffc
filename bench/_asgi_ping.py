"""The studio's ASGI application with one extra endpoint for bench.tool_overhead's
baseline: `/__bench/ping` answers `{}` straight from ASGI (no Django, no database), so a
round trip to it is what Daphne and the HTTP client alone cost on the same server."""

from __future__ import annotations

from typing import Any

from studio.asgi import application as studio_application

PING_PATH = "/__bench/ping"


async def application(scope: dict[str, Any], receive: Any, send: Any) -> None:
    if scope["type"] != "http" or scope["path"] != PING_PATH:
        await studio_application(scope, receive, send)
        return
    while (await receive()).get("more_body"):
        pass
    headers = [(b"content-type", b"application/json"), (b"content-length", b"2")]
    await send({"type": "http.response.start", "status": 200, "headers": headers})
    await send({"type": "http.response.body", "body": b"{}"})
