"""`POST /api/tools/<name>/execute` with a token, answered on the event loop
(tools_app.services.execute_fast) instead of through Django and DRF, with the same
answer: studio/asgi.py puts `FastExecute` in front of Django.

It serves only what it can answer exactly as the DRF view would: a POST on that path
with `Authorization: Token <key>`, a JSON object body with `input` (not `input_text`)
and a Content-Length, that the studio's JSON limits accept, a host Django allows, no
SSL redirect due. The service then finds the token's user and the tool in one query;
anything else, or no such token or tool, goes on to Django with the body as it was
read, so every refusal (401, 404, 400 with JSON paths, 413, 415) is Django's and DRF's
own. Its responses carry the headers the view's would: DRF's `Allow` and `Vary`, and
those of the security middleware in settings.MIDDLEWARE (each one's `process_response`,
computed once per scheme). `STUDIO_FAST_EXECUTE=0` turns it off.
"""

from __future__ import annotations

import asyncio
import io
import re
from typing import Any
from urllib.parse import parse_qs

from django.conf import settings
from django.core.exceptions import DisallowedHost
from django.core.handlers.asgi import ASGIRequest
from django.http import HttpResponse
from django.utils.module_loading import import_string
from rest_framework.renderers import JSONRenderer

from common.exceptions import ApplicationError
from common.json_input import json_loads
from tools_app import async_db
from tools_app.services.execute_fast import Answer, tool_execute_fast

ROUTE = re.compile(r"/api/tools/(?P<name>[^/]+)/execute")
# The middleware whose process_response only adds headers that depend on the scheme.
HEADER_MIDDLEWARE = (
    "django.middleware.security.SecurityMiddleware",
    "csp.middleware.CSPMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
)
JSON_TYPES = frozenset({"*/*", "application/*", "application/json"})
DRF_HEADERS = [(b"vary", b"Accept"), (b"allow", b"POST, OPTIONS")]
_renderer = JSONRenderer()


class FastExecute:
    """ASGI: the fast execute path, in front of `app` (Django)."""

    def __init__(self, app: Any) -> None:
        self.app = app
        self.enabled = settings.STUDIO_FAST_EXECUTE and async_db.bind()
        self._headers: dict[bool, list[tuple[bytes, bytes]]] = {}

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        match = ROUTE.fullmatch(scope.get("path", "")) if scope["type"] == "http" else None
        if not (self.enabled and match and scope["method"] == "POST"):
            return await self.app(scope, receive, send)
        messages = await _read_body(receive)
        if messages is None:
            return None  # the client went away
        replay = _replaying(messages, receive)
        request = _request(scope, b"".join(m.get("body", b"") for m in messages))
        call = _call(request, match["name"])
        if call is None:
            return await self.app(scope, replay, send)
        # Shielded: a client that hangs up does not stop a run halfway (Django's thread
        # would finish it too); its row is still written.
        answer = await asyncio.shield(tool_execute_fast(**call))
        if answer is None:
            return await self.app(scope, replay, send)
        await self._respond(send, answer, secure=request.is_secure())
        return None

    async def _respond(self, send: Any, answer: Answer, *, secure: bool) -> None:
        payload = _renderer.render(answer.body)
        headers = [
            (b"content-type", b"application/json"),
            (b"content-length", str(len(payload)).encode()),
            *DRF_HEADERS,
            *self._security_headers(secure),
        ]
        await send({"type": "http.response.start", "status": answer.status, "headers": headers})
        await send({"type": "http.response.body", "body": payload})

    def _security_headers(self, secure: bool) -> list[tuple[bytes, bytes]]:
        if secure not in self._headers:
            self._headers[secure] = _middleware_headers(secure)
        return self._headers[secure]


def _middleware_headers(secure: bool) -> list[tuple[bytes, bytes]]:
    """What the header-only middleware of settings.MIDDLEWARE add to a JSON response,
    in Django's order (the last one's process_response first)."""
    request = _request(
        {"type": "http", "method": "POST", "path": "/api/", "headers": [], "scheme": "http"},
        b"",
    )
    request.is_secure = lambda: secure  # type: ignore[method-assign]
    response = HttpResponse(content_type="application/json")
    before = set(response.headers)
    for path in reversed(settings.MIDDLEWARE):
        if path in HEADER_MIDDLEWARE:
            middleware = import_string(path)(_unused_get_response)
            response = middleware.process_response(request, response)
    return [
        (name.lower().encode("latin-1"), value.encode("latin-1"))
        for name, value in response.headers.items()
        if name not in before
    ]


def _unused_get_response(request: Any) -> None:
    raise AssertionError("only process_response is called")


async def _read_body(receive: Any) -> list[dict[str, Any]] | None:
    messages = []
    while True:
        message = await receive()
        if message["type"] == "http.disconnect":
            return None
        messages.append(message)
        if not message.get("more_body"):
            return messages


def _replaying(messages: list[dict[str, Any]], receive: Any) -> Any:
    """A `receive` that gives the messages already read, then the client's own."""
    pending = list(messages)

    async def replay() -> dict[str, Any]:
        return pending.pop(0) if pending else await receive()

    return replay


def _request(scope: dict[str, Any], body: bytes) -> ASGIRequest:
    request = ASGIRequest(scope, io.BytesIO(body))
    request._body = body  # read already
    return request


def _call(request: ASGIRequest, name: str) -> dict[str, Any] | None:
    """The service's arguments, or None when Django must answer (module docstring)."""
    if settings.SECURE_SSL_REDIRECT and not request.is_secure():
        return None
    if settings.DISALLOWED_USER_AGENTS or settings.PREPEND_WWW or request.script_name:
        return None
    try:
        request.get_host()
    except DisallowedHost:
        return None
    auth = request.META.get("HTTP_AUTHORIZATION", "").split()
    if len(auth) != 2 or auth[0].lower() != "token":
        return None
    if request.content_type != "application/json" or (request.encoding or "utf-8") != "utf-8":
        return None
    if not request.META.get("CONTENT_LENGTH", "").isdigit():
        return None  # DRF reads no body without a length (a chunked request)
    if not _json_accepted(request.META.get("HTTP_ACCEPT", "")) or "format" in request.GET:
        return None  # DRF would pick another renderer (its browsable API)
    try:
        data = json_loads(request.body, encoding="utf-8", require_object=True)
    except ApplicationError:
        return None
    if "input" not in data or data.get("input_text") is not None:
        return None
    modes = parse_qs(request.META["QUERY_STRING"]).get("mode")
    return {"key": auth[1], "name": name, "input": data["input"], "mode": (modes or [None])[-1]}


def _json_accepted(accept: str) -> bool:
    """Whether DRF's negotiation picks its JSON renderer for this Accept header: every
    type the client names is JSON or a wildcard."""
    types = [part.split(";")[0].strip().lower() for part in accept.split(",") if part.strip()]
    return all(kind in JSON_TYPES for kind in types)
