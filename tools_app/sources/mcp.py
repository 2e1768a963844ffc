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

from typing import Any

from django.db import transaction
from django.utils import timezone

from common.exceptions import ApplicationError
from tools_app.models import Tool, ToolKind, ToolSource
from tools_app.models_sources import SourceKind
from tools_app.sources.common import (
    get_credentials,
    headers_check,
    names_check,
    set_credentials,
    unique_name,
)
from tools_app.sources.mcp_client import McpFailure, mcp_call, mcp_list_tools
from tools_app.sources.mcp_signin import signin_keep, tools_or_signin
from tools_app.sources.openapi_spec import snake_case

__all__ = ["McpFailure", "mcp_call", "mcp_list_tools"]

TRANSPORTS = ("streamable_http", "sse")


# --- services ----------------------------------------------------------------------------
def _connection(source: ToolSource) -> dict[str, Any]:
    return {
        "url": source.url,
        "transport": source.config.get("transport", "streamable_http"),
        "headers": get_credentials(source).get("headers", {}),
    }


@transaction.atomic
def mcp_server_register(
    *,
    user,
    url: str,
    transport: str = "streamable_http",
    headers: dict[str, str] | None = None,
    name: str = "",
    oauth: dict[str, str] | None = None,
    redirect_uri: str = "",
) -> ToolSource:
    """Connect once (listing its tools proves the URL, transport and headers work), then
    store the server. A server that answers 401 to a source without an Authorization
    header is stored with the OAuth sign-in discovery finds (tools_app.sources.mcp_signin;
    `oauth`: the client_id/client_secret the user gives, else one registered with
    `redirect_uri`) and no tools until a user connects and refreshes."""
    if transport not in TRANSPORTS:
        raise ApplicationError(
            f"transport must be one of {', '.join(TRANSPORTS)}.",
            code="invalid",
            extra={"errors": [{"path": "$.transport", "message": "unknown"}]},
        )
    headers = headers_check(headers)
    tools, signin = tools_or_signin(
        url=url, transport=transport, headers=headers, redirect_uri=redirect_uri, client=oauth
    )
    source = ToolSource.objects.create(
        kind=SourceKind.MCP,
        name=name or url,
        owner=user,
        url=url,
        document={"tools": tools},
        config={"transport": transport},
        imported_at=timezone.now(),
    )
    if signin:
        signin_keep(source, signin, headers)
    elif headers:
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
        p.get("name")
        or unique_name(snake_case(str(p.get("remote_name"))), taken, owner=source.owner)
        for p in picks
    ]
    errors += names_check(names, owner=source.owner, path="$.picks[{i}].name")
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
def mcp_server_refresh(
    *, source: ToolSource, user: Any = None, redirect_uri: str = ""
) -> dict[str, list[str]]:
    """List the server's tools again (as `user` when the server signs in with OAuth);
    update exposed tools, retire those it dropped. A server that now asks for OAuth gets
    its sign-in stored and `signin: ["oauth"]` in the answer, its tools unchanged."""
    connection = _connection(source)
    tools, signin = tools_or_signin(
        **connection, redirect_uri=redirect_uri, source=source, user=user
    )
    if signin:
        signin_keep(source, signin, connection["headers"])
        empty: list[str] = []
        return dict.fromkeys(("added", "removed", "changed", "updated", "retired"), empty) | {
            "signin": ["oauth"]
        }
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
    """URL, transport and decrypted headers of the tool's server, and the source (used
    by the mcp tool type). Only a source of the tool's own owner counts: a config
    pointing at another user's server must not borrow its headers."""
    source = ToolSource.objects.get(
        pk=tool.config.get("source_id"), kind=SourceKind.MCP, owner_id=tool.owner_id
    )
    return {**_connection(source), "source": source}
