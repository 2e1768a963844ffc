"""The web_search system tool: a search API the user or the server configured (SearXNG,
Brave, Tavily; tools_app.websearch.backends) or the model provider's own search (through
the agent side's `model_search`, litellm's `web_search_options`). Results are
`{title, url, snippet}`; with nothing configured the tool says how to configure one."""

from __future__ import annotations

from typing import Any

from asgiref.sync import sync_to_async

from tools_app.websearch.backends import SearchConfig, SearchError, search_api

NOT_CONFIGURED = "No web search configured: add one in Settings → Web search"
DEFAULT_COUNT = 5
MAX_COUNT = 20

INPUT_SCHEMA = {
    "type": "object",
    "properties": {
        "query": {"type": "string", "minLength": 1, "maxLength": 400},
        "count": {
            "type": "integer",
            "minimum": 1,
            "maximum": MAX_COUNT,
            "default": DEFAULT_COUNT,
            "description": "How many results (1-20).",
        },
    },
    "required": ["query"],
    "additionalProperties": False,
}
OUTPUT_SCHEMA = {
    "type": "object",
    "properties": {
        "query": {"type": "string"},
        "provider": {"type": "string"},
        "results": {
            "type": "array",
            "items": {
                "type": "object",
                "properties": {
                    "title": {"type": "string"},
                    "url": {"type": "string"},
                    "snippet": {"type": "string"},
                },
                "required": ["title", "url", "snippet"],
            },
        },
    },
    "required": ["query", "provider", "results"],
}


async def _native(config: SearchConfig, query: str, count: int, context: Any) -> list[dict]:
    side = getattr(context, "side", None)
    search = getattr(side, "model_search", None) if side is not None else None
    if search is None:
        raise SearchError(
            "The model provider's search needs the agent side, which is not installed."
        )
    return await search(query, count, config.model, context)


async def web_search(input: dict[str, Any], context: Any = None) -> dict[str, Any]:  # noqa: A002
    from tools_app.errors import ToolError
    from tools_app.websearch.settings import search_config_for

    query = input["query"].strip()
    if not query:
        raise ToolError("The query is empty.", errors=[{"path": "$.query", "message": "empty"}])
    count = int(input.get("count", DEFAULT_COUNT))
    config = await sync_to_async(search_config_for)(getattr(context, "user", None))
    if config is None:
        raise ToolError(NOT_CONFIGURED)
    try:
        if config.provider == "native":
            results = await _native(config, query, count, context)
        else:
            results = await search_api(config, query, count)
    except SearchError as exc:
        raise ToolError(str(exc)) from None
    return {"query": query, "provider": config.provider, "results": results[:count]}
