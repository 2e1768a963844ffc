"""The runs list (/api/traces/) with each run's cost, tokens and duration, filtered and
searched, and usage (/api/usage/): the user's own runs only; bad filters are a 400."""

from __future__ import annotations

import pytest
from channels.db import database_sync_to_async
from rest_framework.test import APIClient

from tests.agents_core.runtime.conftest import run_to_end
from tests.traces.conftest import of_kind, trace_of

pytestmark = pytest.mark.django_db(transaction=True)


def client_for(user) -> APIClient:
    client = APIClient()
    client.force_authenticate(user)
    return client


async def get(client, path: str) -> dict:
    response = await database_sync_to_async(client.get)(path)
    assert response.status_code == 200, response.content
    return response.json()


@pytest.fixture
async def three_runs(make_thread, owner, outsider):
    """Two runs of the owner (one with a tool call, one whose provider failed), one of an
    outsider, and a sub-agent's run under a supervisor's."""
    echo, _ = await run_to_end(
        await database_sync_to_async(make_thread)("rt-agent"),
        'use rt_echo with {"text": "hi"}',
        owner,
    )
    failed, _ = await run_to_end(
        await database_sync_to_async(make_thread)("rt-agent"),
        "hello",
        owner,
        {"providerOptions": {"studio": {"fail": "backend down"}}},
    )
    supervisor, _ = await run_to_end(
        await database_sync_to_async(make_thread)("supervisor"),
        "use agent-researcher to find the weather_lookup for Paris",
        owner,
    )
    theirs, _ = await run_to_end(
        await database_sync_to_async(make_thread)("rt-agent", outsider), "hello", outsider
    )
    return echo, failed, supervisor, theirs


async def test_the_runs_list_shows_each_of_the_users_runs_with_its_trace_totals(three_runs, owner):
    echo, failed, supervisor, _ = three_runs
    client = client_for(owner)
    listed = await get(client, "/api/traces/")
    assert listed["count"] == 3  # the sub-agent's run is in its parent's trace
    assert [row["id"] for row in listed["results"]] == [
        str(supervisor.pk),
        str(failed.pk),
        str(echo.pk),
    ]
    row = listed["results"][2]
    spans = await trace_of(client, echo)
    tokens = sum(
        s["attributes"]["input_tokens"] + s["attributes"]["output_tokens"]
        for s in of_kind(spans, "model")
    )
    assert row["tokens"] == tokens > 0 and row["costUsd"] == 0.0 and row["durationMs"] > 0
    # The supervisor's totals include its sub-agent's model calls.
    sup = listed["results"][0]
    sup_spans = await trace_of(client, supervisor)
    assert sup["tokens"] == sum(
        s["attributes"]["input_tokens"] + s["attributes"]["output_tokens"]
        for s in of_kind(sup_spans, "model")
    )
    assert len({s["runId"] for s in of_kind(sup_spans, "model")}) == 2


async def test_filters_and_search_narrow_the_list(three_runs, owner):
    echo, failed, supervisor, _ = three_runs
    client = client_for(owner)

    async def ids(query: str) -> list[str]:
        return [row["id"] for row in (await get(client, f"/api/traces/?{query}"))["results"]]

    assert await ids("status=failed") == [str(failed.pk)]
    assert await ids("agent=supervisor") == [str(supervisor.pk)]
    assert await ids("q=rt_echo") == [str(echo.pk)]
    assert await ids("q=backend+down") == [str(failed.pk)]
    assert await ids("model=studio/scripted&agent=rt-agent") == [str(failed.pk), str(echo.pk)]
    assert await ids("min_cost=0&max_cost=0") == [str(supervisor.pk), str(echo.pk)]
    assert await ids("min_ms=3600000") == []
    assert await ids("until=2000-01-01T00:00:00Z") == []


async def test_usage_counts_tokens_cost_errors_and_latency(three_runs, owner):
    echo, failed, supervisor, _ = three_runs
    data = await get(client_for(owner), "/api/usage/?days=7")
    by_agent = {}
    for row in data["usage"]:
        by_agent[row["agent"]] = by_agent.get(row["agent"], 0) + row["calls"]
    # rt-agent: two calls for the echo run, and the failed run's one call that failed.
    assert by_agent == {"rt-agent": 3, "supervisor": 2, "researcher": 2}
    assert {row["model"] for row in data["usage"]} == {"studio/scripted"}
    (today,) = data["days"]
    assert (today["runs"], today["errors"]) == (3, 1)
    assert today["errorRate"] == pytest.approx(1 / 3)
    latency = data["latencyMs"]
    assert 0 < latency["modelCall"]["p50"] <= latency["modelCall"]["p99"]
    assert latency["run"]["p50"] is not None and latency["timeToFirstToken"]["p95"] is not None


@pytest.mark.parametrize(
    ("query", "field"),
    [
        ("status=lost", "status"),
        ("min_ms=-1", "min_ms"),
        ("since=yesterday", "since"),
        ("min_cost=abc", "min_cost"),
    ],
)
def test_a_bad_filter_is_a_400_naming_it(owner, query, field):
    response = client_for(owner).get(f"/api/traces/?{query}")
    assert response.status_code == 400 and list(response.json()) == [field]


def test_usage_refuses_a_bad_range(owner):
    response = client_for(owner).get("/api/usage/?days=0")
    assert response.status_code == 400 and list(response.json()) == ["days"]


def test_anonymous_callers_get_401(anon_client):
    assert anon_client.get("/api/traces/").status_code == 401
    assert anon_client.get("/api/usage/").status_code == 401
