"""HTTP request tools: method, URL template, headers and a body template filled from the
input, sent through tools_app.net (the web_fetch address guard), authenticated by tools_app.auth
(API key, bearer, basic, OAuth 2.0, JWT bearer, mutual TLS, a private CA) with the tool's
credentials decrypted only for the request.

Templates use `{field}` (or `{a.b}` for nested input). In the URL values are
percent-encoded; in headers they are inserted as text (no newlines); in a JSON body a
string that is exactly "{field}" becomes the input value itself (any JSON type), other
placeholders inside strings become text. Without a body template, POST/PUT/PATCH send
the whole input as JSON. Result: {status, headers, body} (body parsed when JSON); a
non-2xx answer is a tool error carrying the status and the body. The requests of an
async run carry its `Idempotency-Key` (tools_app.types.add_idempotency_header).
"""

from __future__ import annotations

import json
import re
from typing import Any, ClassVar
from urllib.parse import quote

from tools_app.auth import AUTH_SCHEMA
from tools_app.types import ConfigError, add_idempotency_header
from tools_app.types.authenticated import AuthenticatedType

PLACEHOLDER = re.compile(r"\{([A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z0-9_]+)*)\}")
METHODS = ["GET", "POST", "PUT", "PATCH", "DELETE", "HEAD"]
MAX_BODY = 1_000_000


class TemplateError(ValueError):
    pass


def _lookup(data: Any, dotted: str) -> Any:
    value = data
    for part in dotted.split("."):
        if isinstance(value, dict) and part in value:
            value = value[part]
        elif isinstance(value, list) and part.isdigit() and int(part) < len(value):
            value = value[int(part)]
        else:
            raise TemplateError(f"The input has no value for {{{dotted}}}.")
    return value


def _text(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value)


def fill_text(template: str, data: Any, *, encode: bool = False) -> str:
    def replace(match: re.Match[str]) -> str:
        text = _text(_lookup(data, match.group(1)))
        return quote(text, safe="") if encode else text

    return PLACEHOLDER.sub(replace, template)


def fill_json(template: Any, data: Any) -> Any:
    if isinstance(template, str):
        whole = PLACEHOLDER.fullmatch(template)
        return _lookup(data, whole.group(1)) if whole else fill_text(template, data)
    if isinstance(template, list):
        return [fill_json(item, data) for item in template]
    if isinstance(template, dict):
        return {key: fill_json(value, data) for key, value in template.items()}
    return template


def build_request(config: dict[str, Any], data: Any) -> dict[str, Any]:
    """{method, url, headers, content} before auth (tools_app.auth adds it)."""
    method = config.get("method", "GET").upper()
    url = fill_text(config["url"], data, encode=True)
    headers = {}
    for name, template in (config.get("headers") or {}).items():
        value = fill_text(template, data)
        if "\r" in value or "\n" in value:
            raise TemplateError(f"Header {name} would contain a line break.")
        headers[name] = value
    content = None
    body = config.get("body")
    body_type = config.get("body_type", "json")
    if body not in (None, ""):
        if body_type == "json":
            parsed = json.loads(body) if isinstance(body, str) else body
            content = json.dumps(fill_json(parsed, data)).encode()
            headers.setdefault("Content-Type", "application/json")
        else:
            content = fill_text(body, data).encode()
            headers.setdefault("Content-Type", "text/plain; charset=utf-8")
    elif method in ("POST", "PUT", "PATCH"):
        content = json.dumps(data).encode()
        headers.setdefault("Content-Type", "application/json")
    return {"method": method, "url": url, "headers": headers, "content": content}


class HttpToolType(AuthenticatedType):
    kind = "http"
    label = "HTTP request"
    config_schema: ClassVar[dict[str, Any]] = {
        "type": "object",
        "properties": {
            "method": {"type": "string", "enum": METHODS, "default": "GET"},
            "url": {
                "type": "string",
                "minLength": 1,
                "description": "http(s) URL; {field} is replaced by the input's value "
                "(percent-encoded), e.g. https://api.example.com/cities/{city}",
            },
            "headers": {
                "type": "object",
                "additionalProperties": {"type": "string"},
                "description": 'Header templates, e.g. {"Accept": "application/json"}.',
            },
            "body_type": {"type": "string", "enum": ["json", "text"], "default": "json"},
            "body": {
                "type": "string",
                "description": 'Body template. JSON: a string that is exactly "{field}" '
                "becomes the input value. Empty: POST/PUT/PATCH send the whole input.",
            },
            "auth": AUTH_SCHEMA,
        },
        "required": ["url"],
        "additionalProperties": False,
    }

    def validate_config(self, config: dict[str, Any]) -> dict[str, Any]:
        config = super().validate_config(config)
        if not re.match(r"^https?://", config["url"], re.IGNORECASE):
            raise ConfigError({"config.url": "The URL must start with http:// or https://."})
        if config.get("body") and config.get("body_type", "json") == "json":
            try:
                json.loads(config["body"])
            except ValueError as exc:
                message = f"The body template is not JSON: {exc}"
                raise ConfigError({"config.body": message}) from None
        return config

    async def execute(self, tool: Any, input: Any, context: Any) -> Any:  # noqa: A002
        from tools_app import net
        from tools_app.auth.resolver import auth_fetch
        from tools_app.errors import ToolError

        try:
            request = build_request(tool.config, input)
        except (TemplateError, ValueError, KeyError) as exc:
            raise ToolError(f"Cannot build the request: {exc}") from None
        add_idempotency_header(request["headers"], context)
        try:
            response = await auth_fetch(
                tool, request, context, deadline_seconds=tool.timeout_seconds, max_bytes=MAX_BODY
            )
        except (net.BlockedURL, net.FetchError) as exc:
            raise ToolError(str(exc)) from None
        text, _ = response.text()
        body: Any = text
        if "json" in response.content_type:
            try:
                body = json.loads(text)
            except ValueError:
                pass
        result = {"status": response.status, "headers": response.headers, "body": body}
        if not 200 <= response.status < 300:
            raise ToolError(
                f"HTTP {response.status} {response.reason}: {text[:2000]}", output=result
            )
        return result


tool_type = HttpToolType()
