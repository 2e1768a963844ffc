"""Tool calls in a run: partial input, hooks, validation, crashes, tool choice, max steps,
sub-agents, transforms, task tools, model errors, abort (offline provider)."""

from __future__ import annotations

import asyncio
import copy
import json

import pytest
from channels.db import database_sync_to_async

from agents_core.models import Message, Run, StreamEvent, TaskItem, ToolCall
from tests.agents_core.runtime import definitions
from tests.agents_core.runtime.conftest import events_of, run_to_end, settle, squeeze, start, types

pytestmark = pytest.mark.django_db(transaction=True)


async def thread_for(make_thread, slug="rt-agent"):
    return await database_sync_to_async(make_thread)(slug)


def of_type(events, name):
    return [event for event in events if event["type"] == name]


def apply(root, patch):
    path = patch["path"]
    if patch["op"] == "set":
        if not path:
            return copy.deepcopy(patch["value"])
        node = root
        for key in path[:-1]:
            node = node[key]
        if isinstance(node, list) and path[-1] == len(node):
            node.append(copy.deepcopy(patch["value"]))
        else:
            node[path[-1]] = copy.deepcopy(patch["value"])
        return root
    node = root
    for key in path[:-1]:
        node = node[key]
    node[path[-1]] += patch["value"]
    return root


async def test_patches_show_the_partial_input_while_it_streams(make_thread, owner):
    thread = await thread_for(make_thread)
    text = r"a fairly long sentence, with \"quotes\" and ünïcödé, streamed in small chunks"
    message = 'use rt_echo with {"text": "' + text + '", "count": 12345}'
    _, events = await run_to_end(
        thread, message, owner, {"providerOptions": {"studio": {"delay": 0.004, "chunk_size": 3}}}
    )
    deltas = of_type(events, "tool-input-delta")
    assert len(deltas) > 5
    raw = "".join(d["argsTextDelta"] for d in deltas)
    assert json.loads(raw) == {"text": json.loads('"' + text + '"'), "count": 12345}
    value, seen = None, []
    for delta in deltas:
        for patch in delta["patches"]:
            value = apply(value, patch)
        seen.append(copy.deepcopy(value))
    final = json.loads(raw)
    assert seen[-1] == final
    partial_texts = [
        v["text"]
        for v in seen
        if isinstance(v, dict) and "text" in v and v["text"] != final["text"]
    ]
    assert partial_texts and all(final["text"].startswith(t) for t in partial_texts)
    # The patches carry what changed, never the whole value again.
    assert sum(len(json.dumps(d["patches"])) for d in deltas) < 3 * len(raw) + 60 * len(deltas)
    assert of_type(events, "tool-call")[0]["input"] == final


async def test_lifecycle_hooks_and_to_model_output(make_thread, owner):
    definitions.LIFECYCLE.clear()
    thread = await thread_for(make_thread)
    _, events = await run_to_end(thread, 'use rt_echo with {"text": "hi"}', owner)
    kinds = [kind for kind, _ in definitions.LIFECYCLE]
    assert kinds[0] == "start" and kinds[-2:] == ["available", "output"]
    assert set(kinds[1:-2]) == {"delta"}
    result = of_type(events, "tool-result")[0]
    assert result["output"] == {"echo": {"text": "hi"}, "checked": True}
    assert result["modelOutput"] == {"echoed": "hi"}


async def test_agent_hooks_skip_a_call_and_change_an_output(make_thread, owner):
    thread = await thread_for(make_thread)
    run, events = await run_to_end(thread, 'use rt_echo with {"text": "x", "blocked": true}', owner)
    hook = of_type(events, "tool-hook")[0]
    assert hook["hook"] == "before_tool_call" and hook["proceed"] is False
    assert hook["source"] == "agent" and hook["reason"] == "blocked by policy"
    result = of_type(events, "tool-result")[0]
    assert result["skipped"] is True and result["output"] == {"blocked": True}
    call = await database_sync_to_async(ToolCall.objects.get)(run=run)
    assert call.status == "skipped" and call.hook_decisions[0]["proceed"] is False


async def test_per_run_hooks_replace_the_agents_hook_of_the_same_key_only(make_thread, owner):
    thread = await thread_for(make_thread)
    seen = []

    def before(info):
        seen.append(info["input"])
        return {"input": {**info["input"], "text": "rewritten"}, "reason": "normalised"}

    _, events = await run_to_end(
        thread,
        'use rt_echo with {"text": "x", "blocked": true}',
        owner,
        {"hooks": {"before_tool_call": before}},
    )
    assert seen == [{"text": "x", "blocked": True}]
    hooks = of_type(events, "tool-hook")
    assert [(h["hook"], h["source"]) for h in hooks] == [
        ("before_tool_call", "run"),
        ("after_tool_call", "agent"),
    ]
    # The agent's before hook would have skipped the call; the run's replaced it, and the
    # agent's after hook still ran.
    result = of_type(events, "tool-result")[0]
    assert result["output"] == {"echo": {"text": "rewritten", "blocked": True}, "checked": True}


async def test_a_schema_error_goes_back_to_the_model_and_the_run_continues(make_thread, owner):
    thread = await thread_for(make_thread)
    run, events = await run_to_end(thread, 'use rt_echo with {"text": 5}', owner)
    error = of_type(events, "tool-error")[0]
    assert error["errors"][0]["path"] == "$.text"
    assert not of_type(events, "tool-call")
    answer = "".join(e["textDelta"] for e in events if e["type"] == "text-delta" and e["step"] == 2)
    assert "rt_echo failed" in answer and "$.text" in answer
    assert run.status == "completed"


async def test_a_tool_crash_goes_back_to_the_model_not_the_end_of_the_run(make_thread, owner):
    thread = await thread_for(make_thread)
    run, events = await run_to_end(thread, "use rt_crash for notes.txt", owner)
    error = of_type(events, "tool-error")[0]
    assert "RuntimeError: the disk is full while writing notes" in error["error"]
    assert run.status == "completed" and of_type(events, "run-finish")


async def test_malformed_arguments_are_a_tool_error(make_thread, owner):
    thread = await thread_for(make_thread)
    _, events = await run_to_end(thread, 'use rt_echo with {"text": "a" "b"}', owner)
    assert "not valid JSON" in of_type(events, "tool-error")[0]["error"]


async def test_tool_choice_none_offers_no_tools(make_thread, owner):
    thread = await thread_for(make_thread)
    _, events = await run_to_end(thread, "use rt_crash for x", owner, {"toolChoice": "none"})
    assert "tool-input-start" not in types(events)


async def test_a_named_tool_choice_forces_that_tool(make_thread, owner):
    thread = await thread_for(make_thread)
    _, events = await run_to_end(thread, "say hello", owner, {"toolChoice": "rt_echo"})
    assert of_type(events, "tool-call")[0]["toolName"] == "rt_echo"


async def test_active_tools_limit_what_the_model_sees(make_thread, owner):
    thread = await thread_for(make_thread)
    _, events = await run_to_end(thread, "use rt_crash for x", owner, {"activeTools": ["rt_echo"]})
    assert "tool-input-start" not in types(events)
    text = "".join(e["textDelta"] for e in of_type(events, "text-delta"))
    assert "(I have: rt_echo)" in text


async def test_max_steps_stops_a_model_that_keeps_calling_tools(make_thread, owner):
    thread = await thread_for(make_thread)
    run, events = await run_to_end(
        thread, 'use rt_echo with {"text": "x"}', owner, {"toolChoice": "required", "maxSteps": 3}
    )
    assert len(of_type(events, "step-finish")) == 3
    assert of_type(events, "run-finish")[0]["finishReason"] == "max-steps"
    assert run.step == 3


async def test_a_sub_agent_runs_to_completion_and_its_answer_is_the_result(make_thread, owner):
    thread = await thread_for(make_thread, "supervisor")
    run, events = await run_to_end(
        thread, "use agent-researcher to find the weather_lookup for Paris", owner
    )
    start_event = of_type(events, "tool-input-start")[0]
    assert start_event["toolName"] == "agent-researcher" and start_event["kind"] == "agent"
    result = of_type(events, "tool-result")[0]
    assert "light rain" in result["output"]
    child = result["subagent"]
    child_events = await database_sync_to_async(
        lambda: list(
            StreamEvent.objects.filter(thread_id=child["threadId"]).values_list("type", flat=True)
        )
    )()
    assert child_events[0] == "run-start" and child_events[-1] == "run-finish"
    assert "tool-result" in child_events
    assert run.status == "completed"


async def _nested_thread(thread_id):  # noqa: ANN001, ANN202
    from agents_core.models import Thread

    return await database_sync_to_async(Thread.objects.get)(pk=thread_id)


async def test_a_sub_agents_thread_names_the_parent_run_and_call(make_thread, owner):
    thread = await thread_for(make_thread, "supervisor")
    run, events = await run_to_end(
        thread, "use agent-researcher to find the weather_lookup for Paris", owner
    )
    result = of_type(events, "tool-result")[0]

    child = await _nested_thread(result["subagent"]["threadId"])

    assert child.metadata == {
        "parentThreadId": str(thread.pk),
        "parentRunId": str(run.pk),
        "parentToolCallId": result["toolCallId"],
    }


async def test_an_agent_tool_in_a_chat_runs_like_a_sub_agent(make_thread, owner):
    """Both ways to call an agent run through one function: an `agent` tool bound to a
    studio agent gets a nested thread that names its parent, and its result links to it."""
    from agents_core.models import Agent, AgentTool
    from tools_app.models import Tool
    from tools_app.types.agent import PROMPT_SCHEMA

    def setup():  # noqa: ANN202
        agent = Agent.objects.create(
            slug="rt-delegator", name="Delegator", model="studio/scripted", owner=owner
        )
        tool = Tool.objects.create(
            name="ask_researcher",
            kind="agent",
            owner=owner,
            description="Ask the researcher.",
            input_schema=PROMPT_SCHEMA,
            config={"agent": "researcher"},
            timeout_seconds=60,
        )
        AgentTool.objects.create(agent=agent, tool=tool, key="ask_researcher")

    await database_sync_to_async(setup)()
    thread = await thread_for(make_thread, "rt-delegator")
    run, events = await run_to_end(
        thread, "use ask_researcher to find the weather_lookup for Paris", owner
    )
    result = of_type(events, "tool-result")[0]

    assert "light rain" in result["output"]
    assert result["subagent"]["agent"] == "researcher"
    child = await _nested_thread(result["subagent"]["threadId"])
    assert child.metadata["parentRunId"] == str(run.pk)
    assert child.metadata["parentToolCallId"] == result["toolCallId"]
    assert run.status == "completed"


async def test_a_display_transform_masks_input_deltas_calls_and_results(make_thread, owner):
    thread = await thread_for(make_thread)
    _, events = await run_to_end(
        thread, 'use rt_login with {"user": "ann", "password": "hunter2-secret"}', owner
    )
    # The user typed it and the model saw the raw output; what the page shows of the tool
    # never contains it.
    assert "hunter2" not in json.dumps([e for e in events if e["type"].startswith("tool-")])
    deltas = of_type(events, "tool-input-delta")
    assert deltas and all("argsTextDelta" not in d and d["transformed"] for d in deltas)
    assert of_type(events, "tool-call")[0]["input"] == {"user": "ann", "password": "***"}
    assert of_type(events, "tool-result")[0]["output"]["password"] == "***"
    messages = await database_sync_to_async(
        lambda: json.dumps([m.parts for m in Message.objects.filter(thread=thread, role="tool")])
    )()
    assert "hunter2" not in messages


async def test_a_failing_transform_shows_nothing_raw(make_thread, owner):
    thread = await thread_for(make_thread)
    _, events = await run_to_end(thread, 'use rt_opaque with {"secret": "s3cr3t-value"}', owner)
    assert "s3cr3t" not in json.dumps([e for e in events if e["type"].startswith("tool-")])
    assert of_type(events, "tool-input-delta")[0]["hidden"] is True
    assert of_type(events, "tool-call")[0]["input"] is None
    assert of_type(events, "tool-result")[0]["hidden"] is True


async def test_task_tools_keep_one_task_in_progress_and_emit_the_list(make_thread, owner):
    thread = await thread_for(make_thread)
    two = (
        'use task_write with {"tasks": [{"title": "a", "status": "in_progress"}, '
        '{"title": "b", "status": "in_progress"}]}'
    )
    _, events = await run_to_end(thread, two, owner)
    assert "At most one task" in of_type(events, "tool-error")[0]["error"]
    assert not of_type(events, "task-list")  # a failed call names no events after it
    one = (
        'use task_write with {"tasks": [{"title": "pack", "status": "in_progress"}, '
        '{"title": "travel"}]}'
    )
    _, events = await run_to_end(thread, one, owner)
    tasks = of_type(events, "task-list")[0]["tasks"]
    assert [(t["title"], t["status"]) for t in tasks] == [
        ("pack", "in_progress"),
        ("travel", "pending"),
    ]
    travel = tasks[1]["id"]
    _, events = await run_to_end(
        thread, f'use task_update with {{"id": {travel}, "status": "in_progress"}}', owner
    )
    assert "already in progress" in of_type(events, "tool-error")[0]["error"]
    assert not of_type(events, "task-list")
    _, events = await run_to_end(
        thread, f'use task_complete with {{"id": {tasks[0]["id"]}}}', owner
    )
    assert [t["status"] for t in of_type(events, "task-list")[0]["tasks"]] == [
        "completed",
        "pending",
    ]
    count = await database_sync_to_async(TaskItem.objects.filter(thread=thread).count)()
    assert count == 2


async def test_a_provider_failure_ends_the_run_with_a_readable_run_error(make_thread, owner):
    thread = await thread_for(make_thread)
    run, events = await run_to_end(
        thread, "hello", owner, {"providerOptions": {"studio": {"fail": "backend down"}}}
    )
    assert squeeze(types(events)) == ["run-start", "run-error"]
    error = events[-1]
    assert "backend down" in error["error"] and error["code"] in ("unreachable", "unavailable")
    assert run.status == "failed" and "backend down" in run.error


async def test_abort_ends_the_run_as_aborted_and_keeps_the_streamed_text(make_thread, owner):
    from agents_core.services.runs import run_abort

    thread = await thread_for(make_thread, "weather-assistant")
    run = await start(
        thread, "tell me a story " * 10, owner, {"providerOptions": {"studio": {"delay": 0.03}}}
    )
    for _ in range(200):
        seen = await database_sync_to_async(events_of)(thread)
        if of_type(seen, "text-delta"):
            break
        await asyncio.sleep(0.02)
    await database_sync_to_async(run_abort)(run=run, user=owner)
    await settle()
    events = await database_sync_to_async(events_of)(thread)
    assert events[-1]["type"] == "run-finish" and events[-1]["status"] == "aborted"
    run = await database_sync_to_async(Run.objects.get)(pk=run.pk)
    assert run.status == "aborted"
    kept = await database_sync_to_async(
        lambda: Message.objects.filter(run=run, role="assistant").first()
    )()
    # What was streamed before the abort is what is kept, word for word, however little
    # of the answer had arrived.
    streamed = "".join(event["textDelta"] for event in of_type(events, "text-delta"))
    assert streamed and kept is not None
    assert kept.parts[0]["text"] == streamed
    assert "I am the offline".startswith(streamed) or streamed.startswith("I am the offline")
