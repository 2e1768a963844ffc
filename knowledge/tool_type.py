"""The `knowledge_search` tool type: a search in one of the tool owner's knowledge bases.

Registered by knowledge's AppConfig (tools_app never imports this app). The tool's input
is `{"query", "k"?, "filters"?}`; its output is the search result (knowledge.services.
search), numbered `[1]`, `[2]`... so that the model's answer can cite them, and the chat
renders it as citation cards.
"""

from __future__ import annotations

from typing import Any, ClassVar

from asgiref.sync import sync_to_async
from django.db import close_old_connections

from common.exceptions import ApplicationError
from knowledge.models import KnowledgeBase
from knowledge.services.search import filters_from, knowledge_search
from tools_app.errors import ToolError
from tools_app.types import ToolType

INPUT_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "query": {"type": "string", "minLength": 1, "description": "What to look for."},
        "k": {"type": "integer", "minimum": 1, "maximum": 20, "description": "How many results."},
        "filters": {
            "type": "object",
            "properties": {
                "documents": {"type": "array", "items": {"type": "integer"}},
                "kinds": {"type": "array", "items": {"enum": ["file", "url", "text"]}},
                "formats": {
                    "type": "array",
                    "items": {"enum": ["pdf", "docx", "html", "markdown", "text", "csv", "json"]},
                },
                "page_min": {"type": "integer", "minimum": 1},
                "page_max": {"type": "integer", "minimum": 1},
                "heading": {"type": "string"},
            },
            "additionalProperties": False,
        },
    },
    "required": ["query"],
    "additionalProperties": False,
}


class KnowledgeSearchToolType(ToolType):
    kind = "knowledge_search"
    label = "Knowledge base search"
    config_schema: ClassVar[dict[str, Any]] = {
        "type": "object",
        "properties": {
            "knowledge_base": {
                "type": "string",
                "minLength": 1,
                # Checked when the tool runs, against the tool owner's bases only: a
                # check here would tell anyone which slugs other users have.
                "description": "The slug of one of your knowledge bases (/knowledge/).",
            },
            "k": {"type": "integer", "minimum": 1, "maximum": 20, "default": 5},
            "mode": {"type": "string", "enum": ["hybrid", "fts", "vector"], "default": "hybrid"},
        },
        "required": ["knowledge_base"],
        "additionalProperties": False,
    }

    async def execute(self, tool: Any, input: Any, context: Any) -> Any:  # noqa: A002
        # Not thread-sensitive: a run task may inherit the context of the sync thread that
        # launched it, where asgiref refuses the thread-sensitive executor (deadlock).
        return await sync_to_async(_tool_search_closing, thread_sensitive=False)(
            tool=tool, input=input
        )


def _tool_search_closing(*, tool: Any, input: dict[str, Any]) -> dict[str, Any]:  # noqa: A002
    """The search in a pool thread, which gives its database connection back after."""
    try:
        return tool_search(tool=tool, input=input)
    finally:
        close_old_connections()


def tool_search(*, tool: Any, input: dict[str, Any]) -> dict[str, Any]:  # noqa: A002
    """The search a tool makes: only in a base its owner owns."""
    config = tool.config or {}
    kb = KnowledgeBase.objects.filter(
        owner_id=tool.owner_id, slug=config.get("knowledge_base", "")
    ).first()
    if kb is None or tool.owner_id is None:
        raise ToolError(f"Knowledge base {config.get('knowledge_base')!r} not found.")
    try:
        return knowledge_search(
            kb=kb,
            query=input.get("query", ""),
            k=int(input.get("k") or config.get("k") or 5),
            mode=config.get("mode", "hybrid"),
            filters=filters_from(input.get("filters")),
        )
    except ApplicationError as exc:
        raise ToolError(exc.message) from None


tool_type = KnowledgeSearchToolType()
