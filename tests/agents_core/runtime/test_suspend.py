"""Suspended calls: ask_user, submit_plan, per-binding approval, client functions;
resume from fresh database objects and from another process; auto-resume."""

from __future__ import annotations

import subprocess
import sys

import pytest
from channels.db import database_sync_to_async

from agents_core.models import Message, Run, ToolCall
from agents_core.services import runs as run_services
from common.exceptions import ApplicationError
from tests.agents_core.runtime.conftest import events_of, run_to_end, settle, squeeze, types
from tests.conftest import ROOT, child_process_env

pytestmark = pytest.mark.django_db(transaction=True)


async def thread_for(make_thread, slug="rt-agent"):
    return await database_sync_to_async(make_thread)(slug)


async def resume(run_id, call_id, payload, user):
    def go():
        run = Run.objects.get(pk=run_id)  # fresh from the database
        return run_services.run_resume(run=run, tool_call_id=call_id, payload=payload, user=user)

    await database_sync_to_async(go)()
    await settle()
    return await database_sync_to_async(Run.objects.get)(pk=run_id)


def run_events(thread, run):
    return [e for e in events_of(thread) if e["runId"] == str(run.pk)]


async def test_ask_user_suspends_and_a_resume_continues_in_a_new_stream(make_thread, owner):
    thread = await thread_for(make_thread)
    run, events = await run_to_end(thread, "ask me which city, options: Paris, London", owner)
    assert run.status == "suspended"
    assert events[-1]["type"] == "tool-call-suspended"
    payload = events[-1]["suspendPayload"]
    assert payload["kind"] == "ask-user" and payload["options"] == ["Paris", "London"]
    assert events[-1]["resumeSchema"]["required"] == ["answer"]
    call_id = events[-1]["toolCallId"]
    count = len(events)

    with pytest.raises(ApplicationError) as wrong:
        await database_sync_to_async(run_services.run_resume)(
            run=run, tool_call_id=call_id, payload={"reply": 1}, user=owner
        )
    assert wrong.value.extra["errors"]

    run = await resume(run.pk, call_id, {"answer": "London"}, owner)
    assert run.status == "completed"
    after = (await database_sync_to_async(run_events)(thread, run))[count:]
    assert squeeze(types(after))[:4] == [
        "run-start",
        "tool-call-resumed",
        "tool-result",
        "step-finish",
    ]
    assert after[0]["resumed"] is True and after[1]["payload"] == {"answer": "London"}
    assert after[2]["output"] == {"answer": "London"}
    assert after[-1]["type"] == "run-finish"
    text = "".join(e["textDelta"] for e in after if e["type"] == "text-delta")
    assert "London" in text


async def test_a_rejected_plan_reason_reaches_the_model(make_thread, owner):
    thread = await thread_for(make_thread)
    run, events = await run_to_end(thread, "make a plan for the release", owner)
    assert events[-1]["suspendPayload"]["kind"] == "plan-approval"
    run = await resume(
        run.pk, events[-1]["toolCallId"], {"approved": False, "reason": "too many steps"}, owner
    )
    after = await database_sync_to_async(run_events)(thread, run)
    text = "".join(e["textDelta"] for e in after if e["type"] == "text-delta" and e["step"] == 2)
    assert "too many steps" in text


async def test_a_declined_approval_goes_back_to_the_model_with_its_reason(make_thread, owner):
    thread = await thread_for(make_thread)
    run, events = await run_to_end(thread, "use rt_delete for invoices", owner)
    suspended = events[-1]
    assert suspended["suspendPayload"] == {
        "kind": "approval",
        "tool": "rt_delete",
        "input": {"record": "invoices"},
        "question": "Allow the call to rt_delete?",
    }
    run = await resume(
        run.pk,
        suspended["toolCallId"],
        {"approved": False, "reason": "keep them for the audit"},
        owner,
    )
    after = await database_sync_to_async(run_events)(thread, run)
    error = next(e for e in after if e["type"] == "tool-error")
    assert error["error"] == "The user declined this call: keep them for the audit"
    call = await database_sync_to_async(ToolCall.objects.get)(run=run)
    assert call.status == "failed" and call.output is None
    assert run.status == "completed"


async def test_an_approved_call_runs(make_thread, owner):
    thread = await thread_for(make_thread)
    run, events = await run_to_end(thread, "use rt_delete for drafts", owner)
    run = await resume(run.pk, events[-1]["toolCallId"], {"approved": True}, owner)
    after = await database_sync_to_async(run_events)(thread, run)
    assert next(e for e in after if e["type"] == "tool-result")["output"] == {"deleted": "drafts"}


async def test_auto_resume_makes_the_next_chat_message_the_answer(make_thread, owner):
    thread = await thread_for(make_thread, "rt-auto")
    run, events = await run_to_end(thread, "ask me what to call the project", owner)
    assert run.status == "suspended" and events[-1]["autoResume"] is True
    again, _ = await run_to_end(thread, "Call it Nightingale", owner)
    assert again.pk == run.pk and again.status == "completed"
    call = await database_sync_to_async(ToolCall.objects.get)(run=run)
    assert call.resume_payload == {"answer": "Call it Nightingale"}
    users = await database_sync_to_async(
        lambda: list(
            Message.objects.filter(thread=thread, role="user").values_list("parts", flat=True)
        )
    )()
    assert len(users) == 1  # the answer is the tool's result, not a new user turn


async def test_without_auto_resume_a_new_message_closes_the_waiting_call(make_thread, owner):
    thread = await thread_for(make_thread)
    waiting, events = await run_to_end(thread, "ask me which colour", owner)
    new, new_events = await run_to_end(thread, 'never mind, use rt_echo with {"text": "x"}', owner)
    assert new.pk != waiting.pk and new.status == "completed"
    waiting = await database_sync_to_async(Run.objects.get)(pk=waiting.pk)
    assert waiting.status == "aborted"
    old = await database_sync_to_async(run_events)(thread, waiting)
    assert old[-1]["type"] == "run-finish" and old[-1]["finishReason"] == "superseded"


async def test_a_client_function_result_resumes_the_run(synced, owner):
    from agents_core.models import Agent, AgentTool
    from agents_core.services.threads import thread_create
    from tools_app.models import Tool

    def setup():
        agent = Agent.objects.create(
            slug="browser-helper", name="Browser helper", model="studio/scripted", owner=owner
        )
        tool = Tool.objects.create(
            name="local_time",
            kind="client",
            owner=owner,
            description="The user's local time.",
            input_schema={"type": "object", "properties": {}},
        )
        AgentTool.objects.create(agent=agent, tool=tool, key="local_time")
        return thread_create(user=owner, agent=agent)

    thread = await database_sync_to_async(setup)()
    run, events = await run_to_end(thread, "use local_time please", owner)
    payload = events[-1]["suspendPayload"]
    assert payload["kind"] == "client-function" and payload["function"] == "local_time"

    def answer():
        run_services.client_tool_result(
            run=Run.objects.get(pk=run.pk),
            tool_call_id=events[-1]["toolCallId"],
            output={"iso": "2026-12-02T15:00:00Z"},
            user=owner,
        )

    await database_sync_to_async(answer)()
    await settle()
    after = await database_sync_to_async(run_events)(thread, run)
    assert next(e for e in after if e["type"] == "tool-result")["output"] == {
        "iso": "2026-12-02T15:00:00Z"
    }


RESUME_IN_ANOTHER_PROCESS = """
import asyncio, sys, django
django.setup()
from channels.db import database_sync_to_async
from agents_core.models import Run
from agents_core.registry import definitions_sync, discover, reset_registry
from agents_core.services.runs import run_resume
from agents_core.runtime.execution.active import wait_idle
from tests.agents_core.runtime import definitions

registry = discover()
registry.collect_module(definitions)
reset_registry(registry)

async def main():
    def go():
        run = Run.objects.get(pk=sys.argv[1])
        run_resume(run=run, tool_call_id=sys.argv[2], payload={"answer": "Tokyo"},
                   user=run.started_by)
    await database_sync_to_async(go)()
    await asyncio.sleep(0.1)
    await wait_idle(60)

asyncio.run(main())
"""


def resume_in_another_process(run, call_id: str) -> None:
    """Answer the suspended call with "Tokyo" from a brand new Python process."""
    done = subprocess.run(
        [sys.executable, "-c", RESUME_IN_ANOTHER_PROCESS, str(run.pk), call_id],
        cwd=ROOT,
        env=child_process_env(STUDIO_OFFLINE_DELAY="0"),
        capture_output=True,
        timeout=120,
        text=True,
    )
    assert done.returncode == 0, done.stderr[-3000:]


def test_a_run_suspended_here_is_resumed_by_a_brand_new_process(synced, owner):
    from asgiref.sync import async_to_sync

    from agents_core.models import Agent
    from agents_core.services.threads import thread_create

    thread = thread_create(user=owner, agent=Agent.objects.get(slug="rt-agent"))

    async def suspend():
        return await run_to_end(thread, "ask me which city to visit", owner)

    run, events = async_to_sync(suspend)()
    assert run.status == "suspended"
    resume_in_another_process(run, events[-1]["toolCallId"])
    run.refresh_from_db()
    assert run.status == "completed"
    last = events_of(thread)[-1]
    assert last["type"] == "run-finish" and "Tokyo" in last["text"]
