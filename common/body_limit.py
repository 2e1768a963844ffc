"""An ASGI wrapper that caps HTTP request bodies before any app reads them.

studio/asgi.py puts it in front of everything HTTP: Django, and the MCP and A2A SDKs'
apps (/mcp/, /a2a/), which parse whatever body they are given. A Content-Length over the
limit is answered 413 at once, without reading the body. A body without one (chunked) is
counted as the app reads it: once over the limit the app is told the client went away,
whatever it answers is dropped, and the client gets the 413.
"""

from __future__ import annotations

import json
from typing import Any

from django.conf import settings

from common.exceptions import body_too_large


def _declared_length(scope: dict[str, Any]) -> int | None:
    for name, value in scope.get("headers", []):
        if name == b"content-length":
            try:
                return int(value)
            except ValueError:
                return None
    return None


async def _answer_too_large(send: Any, limit: int) -> None:
    exc = body_too_large(limit)
    payload = json.dumps({"detail": exc.message, "code": exc.code, **exc.extra}).encode()
    await send(
        {
            "type": "http.response.start",
            "status": exc.status_code,
            "headers": [
                (b"content-type", b"application/json"),
                (b"content-length", str(len(payload)).encode()),
                (b"connection", b"close"),
            ],
        }
    )
    await send({"type": "http.response.body", "body": payload})


class BodyLimit:
    """Wraps an ASGI app; `limit` defaults to settings.STUDIO_MAX_BODY_BYTES."""

    def __init__(self, app: Any, *, limit: int | None = None) -> None:
        self.app = app
        self.limit = limit

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            return await self.app(scope, receive, send)
        limit = self.limit if self.limit is not None else settings.STUDIO_MAX_BODY_BYTES
        declared = _declared_length(scope)
        if declared is not None and declared > limit:
            return await _answer_too_large(send, limit)
        state = {"received": 0, "over": False, "answered": False}

        async def counted_receive() -> dict[str, Any]:
            if state["over"]:
                return {"type": "http.disconnect"}
            message = await receive()
            if message["type"] == "http.request":
                state["received"] += len(message.get("body", b""))
                if state["received"] > limit:
                    state["over"] = True
                    return {"type": "http.disconnect"}
            return message

        async def guarded_send(message: dict[str, Any]) -> None:
            if state["over"] and not state["answered"]:
                return  # the app's answer to a body it never got whole
            if message["type"] == "http.response.start":
                state["answered"] = True
            await send(message)

        try:
            await self.app(scope, counted_receive, guarded_send)
        except Exception:
            if not state["over"]:
                raise
        if state["over"] and not state["answered"]:
            await _answer_too_large(send, limit)
