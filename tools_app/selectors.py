"""Reads of tools_app."""

from __future__ import annotations

from django.db.models import QuerySet

from tools_app.models import Tool, ToolSource


def tool_list(*, user) -> QuerySet[Tool]:
    return Tool.objects.live().visible_to(user)


def tool_get(*, user, name: str) -> Tool | None:
    return tool_list(user=user).filter(name=name).first()


def tool_outbound_urls(*, tool: Tool) -> list[str]:
    """The URLs the tool sends requests to, as configured (templates left as written).

    HTTP tools: their URL; OpenAPI operations: their base URL; both with their OAuth token
    and revocation endpoints (tools_app.auth); MCP and A2A tools: the
    endpoint of their source, read only from a source of the tool's own owner.
    """
    config = tool.config or {}
    if tool.kind in ("http", "openapi"):
        auth = config.get("auth") or {}
        urls = [config.get("url" if tool.kind == "http" else "base_url")]
        urls += [auth.get(key) for key in ("token_url", "revocation_url")]
        return [url for url in dict.fromkeys(urls) if isinstance(url, str) and url]
    if tool.kind not in ("mcp", "a2a"):
        return []
    source = ToolSource.objects.filter(
        pk=config.get("source_id"), kind=tool.kind, owner_id=tool.owner_id
    ).first()
    if source is None:
        return []
    if tool.kind == "mcp":
        return [source.url] if source.url else []
    card = source.document or {}
    urls = [i.get("url") for i in card.get("supportedInterfaces") or [] if isinstance(i, dict)]
    urls.append(card.get("url"))
    return [url for url in dict.fromkeys(urls) if isinstance(url, str) and url]
