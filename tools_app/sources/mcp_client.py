"""The studio's MCP client, on the official `mcp` SDK: connect to a server (through the
address guard, the SDK's HTTP client pinned to the checked address), list its tools, call
one. Failures are McpFailure, with the HTTP status and a 401's challenge when the server
refused the request (tools_app.sources.mcp_signin reads them).
"""

from __future__ import annotations

from contextlib import asynccontextmanager
from typing import Any

LIST_TIMEOUT = 15.0


class McpFailure(Exception):
    """The server could not be reached or answered with a protocol error; `status` is
    its first HTTP error status, `challenge` the WWW-Authenticate of a 401."""

    def __init__(self, message: str, *, status: int | None = None, challenge: str = "") -> None:
        super().__init__(message)
        self.status, self.challenge = status, challenge


def _leaf_messages(exc: BaseException) -> list[str]:
    """The real reasons inside the exception groups anyio wraps transport errors in."""
    if isinstance(exc, BaseExceptionGroup):
        return [m for sub in exc.exceptions for m in _leaf_messages(sub)]
    text = str(exc) or type(exc).__name__
    return [f"{type(exc).__name__}: {text}" if type(exc).__name__ not in text else text]


@asynccontextmanager
async def mcp_client(*, url: str, transport: str, headers: dict[str, str], timeout: float):
    """A connected `mcp.Client`; connection and protocol failures raise McpFailure."""
    import httpx2
    from mcp import Client
    from mcp.client.sse import sse_client
    from mcp.client.streamable_http import streamable_http_client

    from tools_app.net import BlockedURL, FetchError
    from tools_app.sources.pinning import checked_pins, pinned_httpx2_client

    try:
        pins = await checked_pins(url)
    except (BlockedURL, FetchError) as exc:
        raise McpFailure(f"The MCP server address is not allowed: {exc}") from None
    statuses: list[str] = []
    refused: dict[str, Any] = {}
    default_timeout = httpx2.Timeout(timeout)

    async def note_status(response: Any) -> None:
        # The SDK reports a refused request as a bare "error response"; keep the status
        # (and a 401's challenge: where the server's OAuth is described).
        if response.status_code >= 400:
            statuses.append(f"HTTP {response.status_code} {response.reason_phrase}")
            refused.setdefault("status", response.status_code)
            refused.setdefault("challenge", response.headers.get("www-authenticate", ""))

    def client_factory(
        headers: dict[str, str] | None = None, timeout: Any = None, auth: Any = None
    ) -> httpx2.AsyncClient:
        return pinned_httpx2_client(
            pins,
            headers=headers,
            auth=auth,
            timeout=timeout or default_timeout,
            event_hooks={"response": [note_status]},
        )

    if transport == "sse":
        stream = sse_client(
            url,
            headers=headers,
            timeout=timeout,
            sse_read_timeout=timeout,
            httpx_client_factory=client_factory,
        )
        mode = "legacy"  # SSE servers predate the discovery probe
    else:
        http = client_factory(headers=headers)
        stream = streamable_http_client(url, http_client=http)
        mode = "auto"
    try:
        async with Client(stream, mode=mode, read_timeout_seconds=timeout, cache=None) as client:
            yield client
    except McpFailure:
        raise
    except Exception as exc:  # transport errors arrive as groups of anything
        reasons = "; ".join(dict.fromkeys([*statuses, *_leaf_messages(exc)]))
        raise McpFailure(f"MCP server {url}: {reasons}", **refused) from None
    finally:
        if transport != "sse":
            await http.aclose()


async def mcp_list_tools(
    *, url: str, transport: str, headers: dict[str, str], timeout: float = LIST_TIMEOUT
) -> list[dict[str, Any]]:
    tools: list[dict[str, Any]] = []
    async with mcp_client(url=url, transport=transport, headers=headers, timeout=timeout) as c:
        cursor = None
        for _page in range(50):  # a paginator that never ends cannot hang the listing
            result = await c.list_tools(cursor=cursor)
            tools += [
                {
                    "name": t.name,
                    "description": t.description or "",
                    "input_schema": t.input_schema or {"type": "object"},
                    "output_schema": t.output_schema,
                }
                for t in result.tools
            ]
            cursor = result.next_cursor
            if not cursor:
                break
    return tools


def _content_text(content: list[Any]) -> str:
    return "\n".join(
        getattr(block, "text", "") for block in content if getattr(block, "type", "") == "text"
    )


async def mcp_call(
    *,
    url: str,
    transport: str,
    headers: dict[str, str],
    name: str,
    arguments: dict[str, Any],
    timeout: float,
) -> dict[str, Any]:
    """Call a remote tool: {"content": [...], "structuredContent": ..., "isError": bool}."""
    from mcp import MCPError

    try:
        async with mcp_client(
            url=url, transport=transport, headers=headers, timeout=timeout
        ) as client:
            result = await client.call_tool(name, arguments)
    except MCPError as exc:
        raise McpFailure(f"MCP error {exc.code}: {exc}") from None
    return {
        "content": [
            block.model_dump(mode="json", by_alias=True, exclude_none=True)
            for block in result.content
        ],
        "text": _content_text(result.content),
        "structuredContent": result.structured_content,
        "isError": bool(result.is_error),
    }
