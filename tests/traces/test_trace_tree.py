"""A run records one trace as it goes: the run, its model calls (exactly what the model
server received), tool calls, hooks, sub-agent runs nested under their call, an async
tool a Celery worker finishes, a suspension resumed by another process."""

from __future__ import annotations

import asyncio

import pytest
from channels.db import database_sync_to_async
from rest_framework.test import APIClient

from tests.agents_core.runtime.conftest import run_to_end
from tests.agents_core.runtime.test_openai_compatible import make_agent_thread
from tests.agents_core.runtime.test_suspend import resume_in_another_process
from tests.conftest import celery_worker_process
from tests.traces.conftest import assert_nested, of_kind, trace_of, when

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def client(owner) -> APIClient:
    client = APIClient()
    client.force_authenticate(owner)
    return client


async def test_the_model_spans_hold_exactly_what_the_model_server_received(
    synced, owner, fake_openai, client
):
    thread = await database_sync_to_async(make_agent_thread)(owner, fake_openai.url)
    run, _ = await run_to_end(thread, "weather in Paris?", owner)
    assert run.status == "completed", run.error
    spans = await trace_of(client, run)
    assert_nested(spans)
    assert [s["kind"] for s in spans] == ["run", "model", "tool", "model"]
    root, first, tool, second = spans
    assert root["traceId"] == str(run.pk) and root["attributes"]["outcome"] == "completed"
    for span, received in zip((first, second), fake_openai.requests, strict=True):
        assert span["attributes"]["messages"] == received["messages"]
        assert span["attributes"]["tools"] == received["tools"]
        assert span["attributes"]["tool_choice"] == received["tool_choice"]
        assert span["name"] == "openai/whatever" and span["parent"] == root["id"]
        assert "api_key" not in span["attributes"]["params"]
        ttft = span["attributes"]["time_to_first_token_ms"]
        assert 0 < ttft <= span["durationMs"]
    assert (first["attributes"]["input_tokens"], first["attributes"]["output_tokens"]) == (31, 12)
    assert (second["attributes"]["input_tokens"], second["attributes"]["output_tokens"]) == (58, 7)
    assert first["attributes"]["finish_reason"] == "tool_calls"
    assert second["attributes"]["finish_reason"] == "stop"
    # The tool ran between the two model calls.
    assert when(first["end"]) <= when(tool["start"]) <= when(tool["end"]) <= when(second["start"])
    assert tool["name"] == "weather_lookup" and tool["attributes"]["mode"] == "sync"
    assert tool["attributes"]["input"] == {"city": "Paris", "units": "metric"}
    assert tool["attributes"]["output"]["conditions"] == "light rain"
    assert tool["attributes"]["isolation"] is not None or "isolation" in tool["attributes"]


async def test_hook_decisions_are_spans_of_their_tool_call(make_thread, owner, client):
    thread = await database_sync_to_async(make_thread)("rt-agent")
    run, _ = await run_to_end(thread, 'use rt_echo with {"text": "hi"}', owner)
    spans = await trace_of(client, run)
    assert_nested(spans)
    (tool,) = of_kind(spans, "tool")
    hooks = of_kind(spans, "hook")
    # The before hook lets this input through without a decision; the after hook decides.
    assert [h["name"] for h in hooks] == ["after_tool_call"]
    assert hooks[0]["parent"] == tool["id"] and hooks[0]["attributes"]["outputChanged"] is True
    assert tool["attributes"]["output"] == {"echo": {"text": "hi"}, "checked": True}
    # The offline model is priced in litellm's map at no cost.
    assert {m["attributes"]["cost_usd"] for m in of_kind(spans, "model")} == {0.0}


async def test_a_sub_agent_run_is_nested_under_its_tool_call(make_thread, owner, client):
    thread = await database_sync_to_async(make_thread)("supervisor")
    run, events = await run_to_end(
        thread, "use agent-researcher to find the weather_lookup for Paris", owner
    )
    assert run.status == "completed"
    spans = await trace_of(client, run)
    assert_nested(spans)
    child_run = next(e for e in events if e["type"] == "tool-result")["subagent"]["runId"]
    (sub,) = of_kind(spans, "subagent")
    call = next(s for s in of_kind(spans, "tool") if s["name"] == "agent-researcher")
    assert sub["parent"] == call["id"] and sub["runId"] == child_run
    child_spans = [s for s in spans if s["runId"] == child_run and s is not sub]
    assert {s["kind"] for s in child_spans} == {"model", "tool"}
    assert all(s["traceId"] == str(run.pk) for s in spans)
    # The child's own id answers the same trace.
    child_trace = await database_sync_to_async(client.get)(f"/api/runs/{child_run}/trace")
    assert [s["id"] for s in child_trace.json()["spans"]] == [s["id"] for s in spans]


@pytest.mark.celery_worker
async def test_an_async_tool_span_is_closed_by_the_worker_that_ran_it(make_thread, owner, client):
    with celery_worker_process(STUDIO_CODE_MODULES="tests.agents_core.runtime.definitions"):
        thread = await database_sync_to_async(make_thread)("rt-agent")
        run, _ = await run_to_end(thread, "use rt_report for the budget", owner)
        for _ in range(300):
            spans = await trace_of(client, run)
            (tool,) = [s for s in of_kind(spans, "tool") if s["name"] == "rt_report"]
            if tool["end"]:
                break
            await asyncio.sleep(0.1)
    assert tool["end"], "the worker never closed the span"
    assert tool["attributes"]["mode"] == "async"
    assert tool["attributes"]["outcome"] == "completed"
    assert tool["attributes"]["output"] == {"report": "Report on the budget", "pages": 3}
    assert tool["attributes"]["worker"]
    assert tool["attributes"]["attempts"] == 1 and tool["durationMs"] > 0
    (root,) = of_kind(spans, "run")
    assert tool["parent"] == root["id"]


def test_a_run_resumed_by_another_process_continues_its_trace(synced, owner, client):
    from asgiref.sync import async_to_sync

    from agents_core.models import Agent
    from agents_core.services.threads import thread_create

    thread = thread_create(user=owner, agent=Agent.objects.get(slug="rt-agent"))
    run, events = async_to_sync(run_to_end)(thread, "ask me which city to visit", owner)
    assert run.status == "suspended"
    before = client.get(f"/api/runs/{run.pk}/trace").json()["spans"]
    (waiting,) = of_kind(before, "suspension")
    assert waiting["end"] is None and waiting["name"] == "ask-user"
    assert of_kind(before, "run")[0]["attributes"]["outcome"] == "suspended"
    resume_in_another_process(run, events[-1]["toolCallId"])
    spans = client.get(f"/api/runs/{run.pk}/trace").json()["spans"]
    assert_nested(spans)
    (root,) = of_kind(spans, "run")
    assert root["start"] == of_kind(before, "run")[0]["start"]
    assert root["attributes"]["outcome"] == "completed" and root["attributes"]["resumed"]
    (waited,) = of_kind(spans, "suspension")
    assert waited["id"] == waiting["id"] and waited["end"] is not None
    tools = [s for s in of_kind(spans, "tool") if s["name"] == "ask_user"]
    assert [t["attributes"]["resumed"] for t in tools] == [False, True]
    assert tools[0]["status"] == "suspended"
    assert when(waited["end"]) <= when(tools[1]["start"])
    assert len(of_kind(spans, "model")) == 2


async def test_an_outsider_gets_404_for_another_users_trace(make_thread, owner, outsider):
    thread = await database_sync_to_async(make_thread)("rt-agent")
    run, _ = await run_to_end(thread, 'use rt_echo with {"text": "hi"}', owner)
    stranger = APIClient()
    stranger.force_authenticate(outsider)
    response = await database_sync_to_async(stranger.get)(f"/api/runs/{run.pk}/trace")
    assert response.status_code == 404
    anonymous = await database_sync_to_async(APIClient().get)(f"/api/runs/{run.pk}/trace")
    assert anonymous.status_code == 401
