"""The offline model's answer from knowledge search results: it quotes the best passages
and cites them by their `[n]` markers, and lists the sources, so that a chat with a
knowledge_search tool shows a cited answer with no model configured."""

from __future__ import annotations

import re
from typing import Any

_SENTENCE = re.compile(r"(?<=[.!?])\s+")
_MARKUP = re.compile(r"^[#>|*\-\s]+")


def is_knowledge_result(value: Any) -> bool:
    return (
        isinstance(value, dict)
        and value.get("kind") == "knowledge_search"
        and isinstance(value.get("results"), list)
    )


def cite_knowledge(value: dict[str, Any], *, limit: int = 3) -> str:
    """`According to <source>: "<first sentence>" [1]. ... Sources: [1] name, page 2.`"""
    results = value["results"][:limit]
    if not results:
        return f"I found nothing about {value.get('query', 'that')!r} in the knowledge base."
    claims, sources = [], []
    for result in results:
        text = _MARKUP.sub("", " ".join(str(result.get("text", "")).split()))
        first = _SENTENCE.split(text, maxsplit=1)[0][:300]
        mark = result.get("citation") or f"[{result.get('rank')}]"
        name = (result.get("document") or {}).get("name", "a document")
        claims.append(f'"{first}" {mark}')
        where = ", ".join(
            part
            for part in (
                f"page {result['page']}" if result.get("page") else "",
                result.get("heading") or "",
            )
            if part
        )
        sources.append(f"{mark} {name}" + (f" ({where})" if where else ""))
    return "From the knowledge base: " + " ".join(claims) + " Sources: " + "; ".join(sources) + "."
