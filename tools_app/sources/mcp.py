"""MCP servers as tool sources, through the official `mcp` SDK client.

A registered server is a ToolSource (kind "mcp"): its URL, transport ("streamable_http"
or "sse") and optional HTTP headers (encrypted, e.g. an Authorization header). Its
`document` keeps the tools it listed last; each exposed tool is a Tool of kind "mcp"
whose config names the source and the remote tool.

Every connection is checked by the web_fetch address guard (tools_app.net): the URL and
every address its host resolves to; the SDK's HTTP client is then pinned to the checked
address (tools_app.sources.pinning), and the SDK never follows redirects off the origin.
"""

from __future__ import annotations

from contextlib import asynccontextmanager
from typing import Any

from asgiref.sync import async_to_sync
from django.db import transaction
from django.utils import timezone

from studio.exceptions import ApplicationError
from tools_app.models import Tool, ToolKind, ToolSource
from tools_app.models_sources import SourceKind
from tools_app.sources.common import (
    get_credentials,
    headers_check,
    names_check,
    set_credentials,
    unique_name,
)
from tools_app.sources.openapi_spec import snake_case

TRANSPORTS = ("streamable_http", "sse")
LIST_TIMEOUT = 15.0


class McpFailure(Exception):
    """The server could not be reached or answered with a protocol error."""


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
    default_timeout = httpx2.Timeout(timeout)

    async def note_status(response: Any) -> None:
        # The SDK reports a refused request as a bare "error response"; keep the status.
        if response.status_code >= 400:
            statuses.append(f"HTTP {response.status_code} {response.reason_phrase}")

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
        raise McpFailure(f"MCP server {url}: {reasons}") from None
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


# --- services ----------------------------------------------------------------------------
def _connection(source: ToolSource) -> dict[str, Any]:
    return {
        "url": source.url,
        "transport": source.config.get("transport", "streamable_http"),
        "headers": get_credentials(source).get("headers", {}),
    }


def _list_or_raise(**connection: Any) -> list[dict[str, Any]]:
    try:
        return async_to_sync(mcp_list_tools)(**connection)
    except McpFailure as exc:
        raise ApplicationError(
            str(exc),
            code="mcp_unreachable",
            extra={"errors": [{"path": "$.url", "message": str(exc)}]},
        ) from None


@transaction.atomic
def mcp_server_register(
    *,
    user,
    url: str,
    transport: str = "streamable_http",
    headers: dict[str, str] | None = None,
    name: str = "",
) -> ToolSource:
    """Connect once (listing its tools proves the URL, transport and headers work), then
    store the server."""
    if transport not in TRANSPORTS:
        raise ApplicationError(
            f"transport must be one of {', '.join(TRANSPORTS)}.",
            code="invalid",
            extra={"errors": [{"path": "$.transport", "message": "unknown"}]},
        )
    headers = headers_check(headers)
    tools = _list_or_raise(url=url, transport=transport, headers=headers)
    source = ToolSource.objects.create(
        kind=SourceKind.MCP,
        name=name or url,
        owner=user,
        url=url,
        document={"tools": tools},
        config={"transport": transport},
        imported_at=timezone.now(),
    )
    if headers:
        set_credentials(source, {"headers": headers})
    return source


def _tool_fields(remote: dict[str, Any], source: ToolSource) -> dict[str, Any]:
    return {
        "description": remote["description"] or f"{remote['name']} (MCP: {source.name})",
        "input_schema": remote["input_schema"],
        "output_schema": remote["output_schema"],
        "config": {"source_id": source.id, "remote_name": remote["name"]},
    }


def mcp_exposed(source: ToolSource) -> dict[str, Tool]:
    tools = Tool.objects.live().filter(
        owner=source.owner, config__source_id=source.id, kind=ToolKind.MCP
    )
    return {tool.config.get("remote_name"): tool for tool in tools}


@transaction.atomic
def mcp_tools_pick(*, source: ToolSource, picks: list[dict[str, str]]) -> list[Tool]:
    """Expose the picked remote tools: [{"remote_name": "add", "name": "calc_add"}]."""
    remote = {t["name"]: t for t in source.document.get("tools", [])}
    exposed = mcp_exposed(source)
    errors = [
        {
            "path": f"$.picks[{i}].remote_name",
            "message": f"the server has no tool {p.get('remote_name')!r}"
            if p.get("remote_name") not in remote
            else f"{p.get('remote_name')!r} is already exposed",
        }
        for i, p in enumerate(picks)
        if p.get("remote_name") not in remote or p.get("remote_name") in exposed
    ]
    taken: set[str] = set()
    names = [
        p.get("name") or unique_name(snake_case(str(p.get("remote_name"))), taken) for p in picks
    ]
    errors += names_check(names, path="$.picks[{i}].name")
    if errors:
        raise ApplicationError(
            f"{errors[0]['path']}: {errors[0]['message']}",
            code="invalid_picks",
            extra={"errors": errors},
        )
    return [
        Tool.objects.create(
            name=name,
            kind=ToolKind.MCP,
            owner=source.owner,
            **_tool_fields(remote[pick["remote_name"]], source),
        )
        for pick, name in zip(picks, names, strict=True)
    ]


@transaction.atomic
def mcp_server_refresh(*, source: ToolSource) -> dict[str, list[str]]:
    """List the server's tools again; update exposed tools, retire those it dropped."""
    tools = _list_or_raise(**_connection(source))
    old = {t["name"]: t for t in source.document.get("tools", [])}
    new = {t["name"]: t for t in tools}
    result: dict[str, list[str]] = {
        "added": sorted(set(new) - set(old)),
        "removed": sorted(set(old) - set(new)),
        "changed": sorted(n for n in set(old) & set(new) if old[n] != new[n]),
        "updated": [],
        "retired": [],
    }
    for remote_name, tool in mcp_exposed(source).items():
        if remote_name not in new:
            tool.gone_at = timezone.now()
            tool.save(update_fields=["gone_at", "updated_at"])
            result["retired"].append(tool.name)
            continue
        fields = _tool_fields(new[remote_name], source)
        if any(getattr(tool, k) != v for k, v in fields.items()):
            for k, v in fields.items():
                setattr(tool, k, v)
            tool.save()
            result["updated"].append(tool.name)
    source.document, source.imported_at = {"tools": tools}, timezone.now()
    source.save(update_fields=["document", "imported_at", "updated_at"])
    return result


def mcp_source_connection(tool: Tool) -> dict[str, Any]:
    """URL, transport and decrypted headers of the tool's server (used by the mcp tool
    type). Only a source of the tool's own owner counts: a config pointing at another
    user's server must not borrow its headers."""
    return _connection(
        ToolSource.objects.get(
            pk=tool.config.get("source_id"), kind=SourceKind.MCP, owner_id=tool.owner_id
        )
    )
