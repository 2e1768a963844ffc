"""The base of the studio's websocket consumers: client frames are JSON objects
`{"type": ..., ...}`, and a frame that cannot be served never closes the socket.

Channels decodes a frame before any handler runs, and an exception there (a frame that is
not JSON, a binary frame) or in a handler closes the socket with 1011 and no word. Here
every bad frame (not text, too big, not JSON, nested too deep, a NUL, not an object, an
unknown type, fields of the wrong type) and every failure of a handler is answered with

    {"type": "error", "code", "message", "request": <the frame's type>, "path"?, "errors"?}

and the socket stays open. A subclass lists its frame types in `frames`: type -> (DRF
serializer of the frame's fields or None, name of the async method that takes the
validated fields).
"""

from __future__ import annotations

import logging
from typing import Any, ClassVar

from channels.generic.websocket import AsyncJsonWebsocketConsumer
from django.conf import settings
from rest_framework import serializers

from common.exceptions import ApplicationError
from common.json_input import JSONInputError, json_loads, json_path

logger = logging.getLogger(__name__)

Frames = dict[str, tuple[type[serializers.Serializer] | None, str]]


def serializer_errors(errors: Any, parts: tuple[Any, ...] = ()) -> list[dict[str, str]]:
    """DRF's nested `{"field": ["message"]}` errors as `[{"path": "$.field", "message"}]`."""
    if isinstance(errors, dict):
        out: list[dict[str, str]] = []
        for key, value in errors.items():
            where = parts if key in ("non_field_errors", "detail") else (*parts, key)
            out += serializer_errors(value, where)
        return out
    if isinstance(errors, list) and errors and not all(isinstance(e, str) for e in errors):
        out = []
        for index, value in enumerate(errors):
            out += serializer_errors(value, (*parts, index))
        return out
    messages = errors if isinstance(errors, list) else [errors]
    return [{"path": json_path(parts), "message": str(m)} for m in messages if m]


class JsonFrameConsumer(AsyncJsonWebsocketConsumer):
    frames: ClassVar[Frames] = {}

    async def receive(
        self, text_data: str | None = None, bytes_data: bytes | None = None, **kwargs: Any
    ) -> None:
        if text_data is None:
            await self.send_error("Send JSON text frames, not binary ones.", code="not_text")
            return
        limit = settings.STUDIO_MAX_BODY_BYTES
        size = len(text_data)
        if size > limit // 4:  # a character is 1 to 4 bytes in UTF-8
            size = len(text_data.encode("utf-8", "surrogatepass"))
        if size > limit:
            await self.send_error(f"The frame is larger than {limit} bytes.", code="too_large")
            return
        try:
            content = json_loads(text_data, require_object=True)
        except JSONInputError as exc:
            await self.send_error(exc.message, code=exc.code, errors=exc.extra["errors"])
            return
        await self.receive_json(content, **kwargs)

    async def receive_json(self, content: dict[str, Any], **kwargs: Any) -> None:
        kind = content.get("type")
        entry = self.frames.get(kind) if isinstance(kind, str) else None
        if entry is None:
            known = ", ".join(sorted(self.frames)) or "none"
            await self.send_error(
                f"Unknown message type {kind!r} (this socket takes: {known}).",
                code="unknown_type",
                request=kind if isinstance(kind, str) else None,
                errors=[{"path": "$.type", "message": "Unknown message type."}],
            )
            return
        serializer_class, method = entry
        try:
            fields: dict[str, Any] = {}
            if serializer_class is not None:
                serializer = serializer_class(data=content)
                serializer.is_valid(raise_exception=True)
                fields = dict(serializer.validated_data)
            await getattr(self, method)(fields)
        except serializers.ValidationError as exc:
            errors = serializer_errors(exc.detail)
            message = f"{errors[0]['path']}: {errors[0]['message']}" if errors else "Invalid."
            await self.send_error(message, code="invalid", request=kind, errors=errors)
        except ApplicationError as exc:
            await self.send_error(
                exc.message, code=exc.code, request=kind, errors=exc.extra.get("errors")
            )
        except Exception:
            # A bug, not the client's doing: logged in full; the socket stays usable.
            logger.exception("Websocket %s: the %r message failed", self.scope.get("path"), kind)
            await self.send_error(
                "The server failed to handle this message (the error was logged).",
                code="internal",
                request=kind,
            )

    async def send_error(
        self,
        message: str,
        *,
        code: str,
        request: str | None = None,
        errors: list[dict[str, Any]] | None = None,
    ) -> None:
        event: dict[str, Any] = {"type": "error", "code": code, "message": message}
        if request is not None:
            event["request"] = request
        if errors:
            event["path"] = errors[0].get("path", "$")
            event["errors"] = errors
        await self.send_json(event)
