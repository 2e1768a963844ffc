"""web_search through the model provider's own search: litellm's `web_search_options`
on a model litellm's model map marks `supports_web_search` (OpenAI's *-search-preview
models, Perplexity's sonar, xAI's grok, Gemini...). Lent to tools_app as
`AgentSide.model_search`: the model is the user's setting, else the run's agent's; its key
and base come from the user's provider credentials like any model call of theirs
(providers.resolve), and the results are the answer's URL citations."""

from __future__ import annotations

from typing import Any

from asgiref.sync import sync_to_async

from agents_core.runtime.run.model_step import litellm_module
from providers.errors import model_error
from providers.resolve import model_call
from tools_app.websearch.backends import SearchError

PROMPT = (
    "Search the web for: {query}\n"
    "Answer with the {count} most relevant pages, one line each, citing each page."
)
SNIPPET_CHARS = 500


def _agent_model(run: Any) -> str:
    from agents_core.models import Run

    row = Run.objects.select_related("agent").filter(pk=getattr(run, "pk", None)).first()
    return row.agent.model if row is not None and row.agent is not None else ""


def _field(value: Any, name: str) -> Any:
    return value.get(name) if isinstance(value, dict) else getattr(value, name, None)


def citations(message: Any, count: int) -> list[dict[str, str]]:
    """The url_citation annotations of an answer, each once, as {title, url, snippet}."""
    content = _field(message, "content") or ""
    results: list[dict[str, str]] = []
    seen: set[str] = set()
    for note in _field(message, "annotations") or []:
        cited = _field(note, "url_citation") if _field(note, "type") == "url_citation" else None
        url = _field(cited, "url") if cited is not None else None
        if not url or url in seen:
            continue
        seen.add(url)
        start, end = _field(cited, "start_index"), _field(cited, "end_index")
        snippet = content[start:end] if isinstance(start, int) and isinstance(end, int) else ""
        title = _field(cited, "title") or url
        results.append({"title": str(title), "url": str(url), "snippet": snippet[:SNIPPET_CHARS]})
    return results[:count]


async def model_search(query: str, count: int, model: str, context: Any) -> list[dict[str, str]]:
    if not model and getattr(context, "run", None) is not None:
        model = await sync_to_async(_agent_model)(context.run)
    if not model:
        raise SearchError(
            "The model provider's search needs a model: set one in Settings → Web search "
            "(e.g. openai/gpt-4o-search-preview)."
        )
    call = await sync_to_async(model_call)(user=getattr(context, "user", None), model=model)
    if call.refusal:
        raise SearchError(f"The model {model} cannot be called: {call.refusal}")
    # Imported here, in a thread, the first time: importing the project never loads litellm.
    litellm = await litellm_module(offline=False)
    if not litellm.supports_web_search(model=call.model):
        raise SearchError(
            f"{model} has no native web search in litellm's model map; pick a model that "
            "has (e.g. openai/gpt-4o-search-preview) or a search API in Settings → Web search."
        )
    kwargs: dict[str, Any] = {}
    if call.api_key:
        kwargs["api_key"] = call.api_key
    if call.api_base:
        kwargs["api_base"] = call.api_base
    try:
        response = await litellm.acompletion(
            model=call.model,
            messages=[{"role": "user", "content": PROMPT.format(query=query, count=count)}],
            web_search_options={"search_context_size": "medium"},
            timeout=25,
            **kwargs,
        )
    except Exception as exc:  # noqa: BLE001 - litellm raises its own error per provider
        raise SearchError(model_error(exc, model).message) from None
    return citations(response.choices[0].message, count)
