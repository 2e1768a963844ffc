"""The search APIs web_search speaks, each through the address guard (tools_app.net):

- SearXNG: `GET <base>/search?q=...&format=json` (the instance must allow the json format);
- Brave Search API: `GET <base>/res/v1/web/search?q=...&count=N` with the key in
  `X-Subscription-Token` (base https://api.search.brave.com);
- Tavily: `POST <base>/search` with `{"query", "max_results"}` and the key as a bearer
  token (base https://api.tavily.com).

Each answer becomes a list of `{title, url, snippet}`; an error status becomes a
`SearchError` whose message says what the service said (401: the key, 429: the rate limit).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlencode

from tools_app import net

DEFAULT_BASES = {
    "brave": "https://api.search.brave.com",
    "tavily": "https://api.tavily.com",
}
DEADLINE_SECONDS = 15.0
MAX_BYTES = 2_000_000
SNIPPET_CHARS = 500
WEB_URL = re.compile(r"^https?://\S+$", re.IGNORECASE)


class SearchError(Exception):
    """A search that did not answer results; the message is what the model and user read."""


@dataclass(frozen=True)
class SearchConfig:
    provider: str  # searxng | brave | tavily | native
    base_url: str = ""
    api_key: str = ""
    model: str = ""
    origin: str = "user"  # user (their settings) | server (STUDIO_WEB_SEARCH_*)

    @property
    def base(self) -> str:
        return (self.base_url or DEFAULT_BASES.get(self.provider, "")).rstrip("/")


def _result(title: Any, url: Any, snippet: Any) -> dict[str, str]:
    text = " ".join(str(snippet or "").split())
    return {
        "title": str(title or url or ""),
        "url": str(url or ""),
        "snippet": text[:SNIPPET_CHARS],
    }


def _detail(body: Any, text: str) -> str:
    """The service's own words from an error body (Brave, Tavily, SearXNG shapes)."""
    if isinstance(body, dict):
        error = body.get("error") or body.get("detail") or body.get("message")
        if isinstance(error, dict):
            error = error.get("detail") or error.get("error") or error.get("message") or error
        if error:
            return str(error)
    return " ".join(text.split())[:300] or "no details"


STATUS_HINTS = {
    401: "the API key was refused",
    403: "access is forbidden",
    429: "rate limit reached; try again later",
    432: "the plan's usage limit is reached",
}


async def _request(
    config: SearchConfig,
    url: str,
    *,
    method: str = "GET",
    headers: dict[str, str],
    body: Any = None,
) -> Any:
    content = json.dumps(body).encode() if body is not None else None
    if content is not None:
        headers = {**headers, "Content-Type": "application/json"}
    try:
        response = await net.fetch(
            url,
            method=method,
            headers={"Accept": "application/json", **headers},
            content=content,
            deadline_seconds=DEADLINE_SECONDS,
            max_bytes=MAX_BYTES,
        )
    except (net.BlockedURL, net.FetchError) as exc:
        raise SearchError(f"{LABELS[config.provider]}: {exc}") from None
    text, _ = response.text()
    try:
        parsed = json.loads(text)
    except ValueError:
        parsed = None
    if not 200 <= response.status < 300:
        hint = STATUS_HINTS.get(response.status, response.reason or "error")
        raise SearchError(
            f"{LABELS[config.provider]} answered HTTP {response.status} ({hint}): "
            f"{_detail(parsed, text)}"
        )
    if not isinstance(parsed, dict):
        raise SearchError(f"{LABELS[config.provider]} did not answer a JSON object.")
    return parsed


def _results(items: Any, snippet_key: str, count: int) -> list[dict[str, str]]:
    """The items that name an http(s) URL, as {title, url, snippet}, at most `count`
    (a result is a web page; anything else is not passed on to the model or the page)."""
    rows = items if isinstance(items, list) else []
    return [
        _result(item.get("title"), item.get("url"), item.get(snippet_key))
        for item in rows
        if isinstance(item, dict) and WEB_URL.match(str(item.get("url") or ""))
    ][:count]


def _listed(body: dict[str, Any], provider: str) -> list[Any]:
    results = body.get("results")
    if not isinstance(results, list):
        raise SearchError(f"{LABELS[provider]}: the answer has no results list.")
    return results


async def _searxng(config: SearchConfig, query: str, count: int) -> list[dict[str, str]]:
    url = f"{config.base}/search?" + urlencode({"q": query, "format": "json"})
    body = await _request(config, url, headers={})
    return _results(_listed(body, "searxng"), "content", count)


async def _brave(config: SearchConfig, query: str, count: int) -> list[dict[str, str]]:
    url = f"{config.base}/res/v1/web/search?" + urlencode({"q": query, "count": count})
    body = await _request(config, url, headers={"X-Subscription-Token": config.api_key})
    web = body.get("web")
    return _results(web.get("results") if isinstance(web, dict) else [], "description", count)


async def _tavily(config: SearchConfig, query: str, count: int) -> list[dict[str, str]]:
    body = await _request(
        config,
        f"{config.base}/search",
        method="POST",
        headers={"Authorization": f"Bearer {config.api_key}"},
        body={"query": query, "max_results": count},
    )
    return _results(_listed(body, "tavily"), "content", count)


LABELS = {"searxng": "SearXNG", "brave": "Brave Search", "tavily": "Tavily", "native": "Model"}
BACKENDS = {"searxng": _searxng, "brave": _brave, "tavily": _tavily}


async def search_api(config: SearchConfig, query: str, count: int) -> list[dict[str, str]]:
    """Results of one search through a configured search API; raises SearchError."""
    return await BACKENDS[config.provider](config, query, count)
