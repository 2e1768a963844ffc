"""A knowledge_search tool for a base, made from the base's page or API."""

from __future__ import annotations

from typing import Any

from django.core.exceptions import ValidationError

from common.exceptions import ApplicationError
from knowledge.models import KnowledgeBase
from knowledge.tool_type import INPUT_SCHEMA
from tools_app.models import Tool
from tools_app.serializers import TOOL_NAME, TOOL_NAME_MESSAGE
from tools_app.services.tools import tool_create


def kb_tool_create(
    *, kb: KnowledgeBase, owner: Any, name: str, description: str = "", k: int = 5
) -> Tool:
    if not TOOL_NAME.match(name):
        raise ApplicationError(TOOL_NAME_MESSAGE, extra={"name": [TOOL_NAME_MESSAGE]})
    description = description or (
        f"Search the knowledge base {kb.name!r} and answer from its passages; cite them "
        "by their [n] markers."
    )
    try:
        return tool_create(
            owner=owner,
            name=name,
            kind="knowledge_search",
            description=description,
            input_schema=INPUT_SCHEMA,
            config={"knowledge_base": kb.slug, "k": k, "mode": "hybrid"},
            timeout_seconds=60.0,
        )
    except ValidationError as exc:
        messages = exc.message_dict
        first = next(iter(messages.values()))[0]
        raise ApplicationError(first, extra=messages) from None
