"""OpenAPI operation tools: one imported operation each (tools_app.sources.openapi).

Tool.config is the request recipe written at import: method, path, base_url, the
parameters with their style, the body media type and the auth config (tools_app.auth,
mapped from the spec's security schemes at import). The secrets are the tool's encrypted
credentials.
"""

from __future__ import annotations

import json
from typing import Any, ClassVar

from tools_app.auth import AUTH_SCHEMA
from tools_app.types import add_idempotency_header
from tools_app.types.authenticated import AuthenticatedType


class OpenApiToolType(AuthenticatedType):
    kind = "openapi"
    label = "OpenAPI operation"
    creatable = False  # made by importing a spec on the sources page
    config_schema: ClassVar[dict[str, Any]] = {
        "type": "object",
        "required": ["method", "path", "base_url"],
        "properties": {
            "source_id": {"type": "integer"},
            "operation_key": {"type": "string"},
            "method": {
                "enum": ["GET", "PUT", "POST", "DELETE", "OPTIONS", "HEAD", "PATCH", "TRACE"]
            },
            "path": {"type": "string", "pattern": "^/"},
            "base_url": {"type": "string", "pattern": "^https?://"},
            "parameters": {
                "type": "array",
                "items": {
                    "type": "object",
                    "required": ["name", "in"],
                    "properties": {
                        "name": {"type": "string"},
                        "in": {"enum": ["path", "query", "header", "cookie"]},
                        "style": {"type": "string"},
                        "explode": {"type": "boolean"},
                    },
                },
            },
            "body": {"type": ["object", "null"]},
            "auth": {**AUTH_SCHEMA, "type": ["object", "null"]},  # null: no security
            "follow_redirects": {"type": "boolean"},
            # An API that answers errors with HTTP 200 and a status in the body (Google's
            # Geocoding API): the spec's `x-error-status` on the operation.
            "error_status": {
                "type": "object",
                "required": ["field", "ok"],
                "properties": {
                    "field": {"type": "string"},
                    "ok": {"type": "array", "items": {"type": "string"}},
                    "message": {"type": "string"},
                },
            },
            # Parameter values set once for the tool (a connector's settings), not input.
            "fixed": {
                "type": "array",
                "items": {
                    "type": "object",
                    "required": ["in", "name", "value"],
                    "properties": {
                        "in": {"enum": ["path", "query", "header", "cookie"]},
                        "name": {"type": "string"},
                        "value": {"type": "string"},
                    },
                },
            },
        },
    }

    async def execute(self, tool: Any, input: Any, context: Any) -> Any:  # noqa: A002
        from tools_app.auth.resolver import auth_fetch
        from tools_app.errors import ToolError
        from tools_app.net import BlockedURL, FetchError
        from tools_app.types.openapi.request import build_request

        config = tool.config or {}
        request = build_request(config, input or {})
        add_idempotency_header(request["headers"], context)
        follow = bool(config.get("follow_redirects"))
        try:
            result = await auth_fetch(
                tool,
                request,
                context,
                deadline_seconds=tool.timeout_seconds,
                max_redirects=5 if follow else 0,
            )
        except BlockedURL as exc:
            raise ToolError(f"The API address is not allowed: {exc}") from None
        except FetchError as exc:
            message = str(exc)
            if not follow and message.startswith("Too many redirects"):
                message = (
                    "The API answered with a redirect, and this tool does not follow "
                    "redirects (set config.follow_redirects to allow it)."
                )
            raise ToolError(message) from None
        text, _ = result.text()
        body: Any = text
        if "json" in result.content_type and text.strip():
            try:
                body = json.loads(text)
            except ValueError:
                body = text
        elif not text:
            body = None
        output = {"status": result.status, "headers": result.headers, "body": body}
        if not 200 <= result.status < 300:
            raise ToolError(f"HTTP {result.status} {result.reason}: {_short(text)}", output=output)
        _check_error_status(config.get("error_status"), body, output)
        return output


def _check_error_status(check: dict[str, Any] | None, body: Any, output: dict) -> None:
    """A 2xx answer whose body says it failed (config.error_status: the status field, the
    values that mean success, the field with the message) is a tool error."""
    from tools_app.errors import ToolError

    if not check or not isinstance(body, dict) or check["field"] not in body:
        return
    value = body[check["field"]]
    if value in check.get("ok", []):
        return
    message = body.get(check.get("message") or "", "")
    raise ToolError(
        f"The API answered {check['field']} {value}: {message}".rstrip(": "), output=output
    )


def _short(text: str, limit: int = 500) -> str:
    text = text.strip()
    return text if len(text) <= limit else text[:limit] + "…"


tool_type = OpenApiToolType()
