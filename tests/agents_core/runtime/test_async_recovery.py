"""An async tool call of a chat whose worker died: the recovered ToolRun completes the
call (or fails it after the last attempt), and a call is completed once whatever number
of completions reach it."""

from __future__ import annotations

from datetime import timedelta

import pytest
from channels.db import database_sync_to_async
from django.utils import timezone

from agents_core.models import Message, ToolCall
from agents_core.services.async_tools import tool_call_async_complete
from tests.agents_core.runtime.conftest import events_of, run_to_end
from tools_app.models import ToolRun
from tools_app.services import runs
from tools_app.services.runs import tool_runs_recover
from tools_app.tasks import tool_run_execute

pytestmark = pytest.mark.django_db(transaction=True)


async def _pending_call(make_thread, owner, monkeypatch):  # noqa: ANN001, ANN202
    """A chat whose async call was handed to a worker that then died mid-run: the task
    message is swallowed, the ToolRun is left running under an expired lease."""
    monkeypatch.setattr(runs, "tool_run_send", lambda tool_run_id: None)
    thread = await database_sync_to_async(make_thread)("rt-agent")
    _, events = await run_to_end(thread, "use rt_report for the budget", owner)
    pending = next(e for e in events if e["type"] == "tool-call-pending")

    def die() -> ToolRun:
        run = ToolRun.objects.get(tool_call__call_id=pending["toolCallId"])
        ToolRun.objects.filter(id=run.id).update(
            status="running",
            attempts=1,
            worker="dead-host:1",
            lease_expires_at=timezone.now() - timedelta(seconds=1),
        )
        return run

    return thread, pending, await database_sync_to_async(die)()


def _results(thread, call_id):  # noqa: ANN001, ANN202
    events = [
        e
        for e in events_of(thread)
        if e["type"] in ("tool-result", "tool-error") and e.get("async")
    ]
    messages = Message.objects.filter(thread=thread, role="signal")
    return (
        ToolCall.objects.get(call_id=call_id),
        events,
        [m.parts[0]["text"] for m in messages],
    )


async def test_a_recovered_async_call_completes_the_chat_call_once(make_thread, owner, monkeypatch):
    thread, pending, run = await _pending_call(make_thread, owner, monkeypatch)
    # The re-queued run executes at once (in this process) when recovery hands it over.
    monkeypatch.setattr(runs, "tool_run_send", tool_run_execute.run)

    report = await database_sync_to_async(tool_runs_recover)()
    again = await database_sync_to_async(tool_call_async_complete)(tool_run_id=run.id)

    assert report["requeued"] == [str(run.id)]
    assert again is None  # a second completion of the same call changes nothing
    call, events, contexts = await database_sync_to_async(_results)(thread, pending["toolCallId"])
    assert call.status == "completed"
    assert call.output == {"report": "Report on the budget", "pages": 3}
    assert [e["type"] for e in events] == ["tool-result"]
    assert len(contexts) == 1 and "function [rt_report] completed" in contexts[0]
    tool_run = await database_sync_to_async(ToolRun.objects.get)(id=run.id)
    assert (tool_run.status, tool_run.attempts) == ("completed", 2)


async def test_a_call_whose_run_is_given_up_fails_in_the_chat(
    make_thread, owner, monkeypatch, settings
):
    settings.STUDIO_TOOL_RUN_MAX_ATTEMPTS = 1
    thread, pending, run = await _pending_call(make_thread, owner, monkeypatch)

    report = await database_sync_to_async(tool_runs_recover)()

    assert report["failed"] == [str(run.id)]
    call, events, contexts = await database_sync_to_async(_results)(thread, pending["toolCallId"])
    assert call.status == "failed"
    assert "given up after 1 attempts" in call.error
    assert [e["type"] for e in events] == ["tool-error"]
    assert len(contexts) == 1 and "function [rt_report] failed" in contexts[0]
