"""web_search against local servers on 127.0.0.1 speaking each search API (SearXNG's JSON
format, Brave's web search, Tavily's search, and a model with native search through
litellm's web_search_options), their errors (401, 429) as those services send them, the
server's own setting, and the address guard."""

from __future__ import annotations

import json
from urllib.parse import parse_qs, urlsplit

import pytest

from providers.services import credential_create
from tools_app.services.execute import tool_execute
from tools_app.websearch import NOT_CONFIGURED
from tools_app.websearch.settings import web_search_save

pytestmark = pytest.mark.django_db

SEARXNG_ANSWER = {
    "query": "django channels",
    "number_of_results": 3,
    "results": [
        {
            "url": f"https://example.org/{i}",
            "title": f"Result {i}",
            "content": f"About  channels\n{i}",
            "engine": "duckduckgo",
            "score": 1.0,
        }
        for i in range(1, 6)
    ],
    "answers": [],
    "suggestions": [],
}


@pytest.fixture
def search_server(local_server, private_network):
    private_network(local_server.url)
    return local_server


def search(system_tool, owner, **input):
    return tool_execute(tool=system_tool("web_search"), input=input, user=owner)


def query_of(request) -> dict[str, list[str]]:
    return parse_qs(urlsplit(request["path"]).query)


def test_nothing_configured_is_a_clear_error(system_tool, owner):
    run = search(system_tool, owner, query="django")

    assert run.status == "failed"
    assert run.error == NOT_CONFIGURED


def test_searxng_results_have_title_url_snippet_and_the_count_asked(
    system_tool, owner, search_server
):
    search_server.route("/search", body=SEARXNG_ANSWER)
    web_search_save(owner=owner, data={"provider": "searxng", "base_url": search_server.url})

    run = search(system_tool, owner, query="django channels", count=3)

    assert run.status == "completed", run.error
    assert run.output == {
        "query": "django channels",
        "provider": "searxng",
        "results": [
            {
                "title": f"Result {i}",
                "url": f"https://example.org/{i}",
                "snippet": f"About channels {i}",
            }
            for i in (1, 2, 3)
        ],
    }
    [request] = search_server.requests
    assert request["method"] == "GET"
    assert query_of(request) == {"q": ["django channels"], "format": ["json"]}


def test_results_that_are_not_web_pages_are_dropped(system_tool, owner, search_server):
    listed = [
        {"url": "javascript:alert(1)", "title": "<b>x</b>", "content": ""},
        {"url": "data:text/html,hi", "title": "d", "content": ""},
        {"url": "HTTPS://Example.org/ok", "title": "ok", "content": "fine"},
    ]
    search_server.route("/search", body={"results": listed})
    web_search_save(owner=owner, data={"provider": "searxng", "base_url": search_server.url})

    run = search(system_tool, owner, query="x")

    assert [r["url"] for r in run.output["results"]] == ["HTTPS://Example.org/ok"]


def test_searxng_without_the_json_format_says_so(system_tool, owner, search_server):
    # SearXNG answers 403 to format=json unless its settings list json in search.formats.
    search_server.route("/search", status=403, body="Forbidden")
    web_search_save(owner=owner, data={"provider": "searxng", "base_url": search_server.url})

    run = search(system_tool, owner, query="x")

    assert run.status == "failed"
    assert run.error == "SearXNG answered HTTP 403 (access is forbidden): Forbidden"


def test_brave_sends_its_subscription_token_and_count(system_tool, owner, search_server):
    search_server.route(
        "/res/v1/web/search",
        body={
            "type": "search",
            "query": {"original": "uplot"},
            "web": {
                "type": "search",
                "results": [
                    {
                        "title": "uPlot",
                        "url": "https://github.com/leeoniya/uPlot",
                        "description": "A small <strong>chart</strong> library",
                    },
                    {"title": "Docs", "url": "https://uplot.dev", "description": "Docs"},
                ],
            },
        },
    )
    web_search_save(
        owner=owner,
        data={"provider": "brave", "base_url": search_server.url, "api_key": "BSA-good-token"},
    )

    run = search(system_tool, owner, query="uplot", count=2)

    assert run.status == "completed", run.error
    assert [r["url"] for r in run.output["results"]] == [
        "https://github.com/leeoniya/uPlot",
        "https://uplot.dev",
    ]
    assert run.output["results"][0]["title"] == "uPlot"
    [request] = search_server.requests
    assert request["headers"]["x-subscription-token"] == "BSA-good-token"
    assert query_of(request) == {"q": ["uplot"], "count": ["2"]}


@pytest.mark.parametrize(
    ("status", "body", "expected"),
    [
        (
            401,
            {
                "type": "ErrorResponse",
                "error": {
                    "id": "c1",
                    "status": 401,
                    "code": "SUBSCRIPTION_TOKEN_INVALID",
                    "detail": "The provided subscription token is invalid.",
                },
            },
            "Brave Search answered HTTP 401 (the API key was refused): "
            "The provided subscription token is invalid.",
        ),
        (
            429,
            {
                "type": "ErrorResponse",
                "error": {
                    "id": "c2",
                    "status": 429,
                    "code": "RATE_LIMITED",
                    "detail": "Request rate limit exceeded for plan.",
                },
            },
            "Brave Search answered HTTP 429 (rate limit reached; try again later): "
            "Request rate limit exceeded for plan.",
        ),
    ],
)
def test_brave_errors_are_tool_errors_in_braves_words(
    system_tool, owner, search_server, status, body, expected
):
    search_server.route("/res/v1/web/search", status=status, body=body)
    web_search_save(
        owner=owner, data={"provider": "brave", "base_url": search_server.url, "api_key": "BSA-x"}
    )

    run = search(system_tool, owner, query="x")

    assert run.status == "failed"
    assert run.error == expected
    assert "BSA-x" not in run.error


def test_tavily_posts_the_query_with_a_bearer_key(system_tool, owner, search_server):
    search_server.route(
        "/search",
        body={
            "query": "celery",
            "answer": None,
            "images": [],
            "results": [
                {
                    "title": "Celery",
                    "url": "https://docs.celeryq.dev",
                    "content": "Distributed task queue",
                    "score": 0.9,
                },
            ],
            "response_time": 0.8,
        },
    )
    web_search_save(
        owner=owner,
        data={"provider": "tavily", "base_url": search_server.url, "api_key": "tvly-good"},
    )

    run = search(system_tool, owner, query="celery", count=4)

    assert run.status == "completed", run.error
    assert run.output["results"] == [
        {"title": "Celery", "url": "https://docs.celeryq.dev", "snippet": "Distributed task queue"}
    ]
    [request] = search_server.requests
    assert request["method"] == "POST"
    assert request["headers"]["authorization"] == "Bearer tvly-good"
    assert json.loads(request["body"]) == {"query": "celery", "max_results": 4}


@pytest.mark.parametrize(
    ("status", "detail", "hint"),
    [
        (401, "Unauthorized: missing or invalid API key.", "the API key was refused"),
        (429, "Your request has been blocked due to excessive requests.", "rate limit reached"),
    ],
)
def test_tavily_errors_are_tool_errors(system_tool, owner, search_server, status, detail, hint):
    search_server.route("/search", status=status, body={"detail": {"error": detail}})
    web_search_save(
        owner=owner, data={"provider": "tavily", "base_url": search_server.url, "api_key": "tvly-k"}
    )

    run = search(system_tool, owner, query="x")

    assert run.status == "failed"
    assert run.error.startswith(f"Tavily answered HTTP {status} ({hint}")
    assert run.error.endswith(detail)


def test_the_servers_setting_serves_users_without_one_and_theirs_comes_first(
    system_tool, owner, teammate, search_server, settings
):
    search_server.route("/search", body=SEARXNG_ANSWER)
    search_server.route("/mine/search", body={"results": [SEARXNG_ANSWER["results"][4]]})
    settings.STUDIO_WEB_SEARCH_PROVIDER = "searxng"
    settings.STUDIO_WEB_SEARCH_URL = search_server.url
    web_search_save(
        owner=teammate, data={"provider": "searxng", "base_url": f"{search_server.url}/mine"}
    )

    server_run = search(system_tool, owner, query="q", count=1)
    own_run = search(system_tool, teammate, query="q")

    assert server_run.output["results"][0]["url"] == "https://example.org/1"
    assert [r["url"] for r in own_run.output["results"]] == ["https://example.org/5"]


def test_a_search_url_on_a_private_address_is_refused_before_connecting(
    system_tool, owner, listener
):
    web_search_save(
        owner=owner, data={"provider": "searxng", "base_url": f"http://127.0.0.1:{listener.port}"}
    )

    run = search(system_tool, owner, query="x")

    assert run.status == "failed"
    assert run.error.startswith("SearXNG: ")
    assert "127.0.0.1" in run.error
    assert listener.connections() == 0


def test_bad_input_is_refused_with_its_path(system_tool, owner):
    run = search(system_tool, owner, query="x", count=50)

    assert run.status == "failed"
    assert run.errors[0]["path"] == "$.count"


CITED = "Django Channels extends Django to handle WebSockets. See the docs."


def test_native_search_asks_the_model_with_web_search_options(system_tool, owner, openai_server):
    answer = openai_server.whole

    def whole(body, reply):
        data = answer(body, reply)
        citation = {
            "url": "https://channels.readthedocs.io/",
            "title": "Django Channels",
            "start_index": 0,
            "end_index": 52,
        }
        data["choices"][0]["message"].update(
            content=CITED, annotations=[{"type": "url_citation", "url_citation": citation}]
        )
        return data

    openai_server.whole = whole
    credential_create(owner=owner, provider="openai", api_key="sk-good", api_base=openai_server.url)
    web_search_save(
        owner=owner, data={"provider": "native", "model": "openai/gpt-4o-search-preview"}
    )

    run = search(system_tool, owner, query="django channels", count=2)

    assert run.status == "completed", run.error
    assert run.output["results"] == [
        {
            "title": "Django Channels",
            "url": "https://channels.readthedocs.io/",
            "snippet": CITED[:52],
        }
    ]
    [request] = openai_server.requests
    assert request.body["model"] == "gpt-4o-search-preview"
    assert request.body["web_search_options"] == {"search_context_size": "medium"}
    assert request.headers["Authorization"] == "Bearer sk-good"


def test_native_search_with_a_model_that_has_none_says_so(system_tool, owner, openai_server):
    credential_create(owner=owner, provider="openai", api_key="sk-good", api_base=openai_server.url)
    web_search_save(owner=owner, data={"provider": "native", "model": "openai/gpt-3.5-turbo"})

    run = search(system_tool, owner, query="x")

    assert run.status == "failed"
    assert run.error.startswith("openai/gpt-3.5-turbo has no native web search")
    assert openai_server.requests == []
