"""web_fetch: GET an http(s) URL through the address guard of
tools_app.net. Never raises: failures are `{"isError": true, "error": reason}`."""

from __future__ import annotations

from typing import Any

from tools_app import net

MAX_CHARS = 100_000
DEADLINE_SECONDS = 15.0
MAX_REDIRECTS = 5
# Enough bytes for MAX_CHARS characters of any encoding (UTF-8 is at most 4 per char).
MAX_BYTES = MAX_CHARS * 4 + 4

INPUT_SCHEMA = {
    "type": "object",
    "properties": {"url": {"type": "string", "description": "An http:// or https:// URL."}},
    "required": ["url"],
    "additionalProperties": False,
}
OUTPUT_SCHEMA = {
    "type": "object",
    "properties": {
        "content": {"type": "string"},
        "truncated": {"type": "boolean"},
        "status": {"type": "integer"},
        "statusText": {"type": "string"},
        "contentType": {"type": "string"},
        "url": {"type": "string"},
        "ok": {"type": "boolean"},
        "isError": {"type": "boolean"},
        "error": {"type": "string"},
    },
}


async def web_fetch(input: dict[str, Any], context: Any = None) -> dict[str, Any]:  # noqa: A002
    try:
        response = await net.fetch(
            input["url"],
            deadline_seconds=DEADLINE_SECONDS,
            max_redirects=MAX_REDIRECTS,
            max_bytes=MAX_BYTES,
        )
    except (net.BlockedURL, net.FetchError) as exc:
        return {"isError": True, "error": str(exc)}
    except Exception as exc:  # noqa: BLE001 - the contract: never raise
        return {"isError": True, "error": f"{type(exc).__name__}: {exc}"}
    content, truncated = response.text(MAX_CHARS)
    return {
        "content": content,
        "truncated": truncated,
        "status": response.status,
        "statusText": response.reason,
        "contentType": response.content_type,
        "url": response.url,
        "ok": 200 <= response.status < 300,
    }
