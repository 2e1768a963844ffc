"""The loop's step and tool-result writes, one statement each (runtime/storage/store_sql.py): the
rows and fields each stores, as the models read them back."""

from __future__ import annotations

import pytest

pytestmark = pytest.mark.django_db


@pytest.fixture
def started(make_thread, owner):
    from agents_core.models import Run, RunStatus
    from agents_core.runtime.storage import store_sql

    thread = make_thread()
    run = Run.objects.create(
        thread=thread, agent=thread.agent, status=RunStatus.RUNNING, started_by=owner
    )
    return run, store_sql.message_start(run_id=run.pk, thread_id=thread.pk)


def save_one_call(run, message_id, *, text, call):
    """Save a step of one tool call `c` (its message and call row); the call's pk."""
    from agents_core.runtime.storage import store

    pks = store.step_save(
        run_id=run.pk,
        thread_id=run.thread_id,
        step=1,
        text=text,
        calls=[{"id": "c", "name": "t", **call}],
        message_id=message_id,
    )
    return pks["c"]


def finish_call(run, call_pk, **fields):
    from agents_core.runtime.storage import store

    store.tool_result_save(
        run_id=run.pk, thread_id=run.thread_id, call_pk=call_pk, call_id="c", name="t", **fields
    )


def test_a_step_saves_its_message_calls_in_order_and_the_runs_step(started):
    from agents_core.models import Message, ToolCall, ToolCallStatus
    from agents_core.runtime.storage import store
    from tools_app.models import Tool

    run, message_id = started
    tool = Tool.objects.get(name="weather_lookup")
    calls = [
        {"id": f"c{n}", "name": "weather", "input": {"city": city}, "inputText": "{}", "tool": tool}
        for n, city in enumerate(["Paris", "Oslo", "Lima"])
    ]
    pks = store.step_save(
        run_id=run.pk,
        thread_id=run.thread_id,
        step=1,
        text="Looking.",
        calls=calls,
        message_id=message_id,
        memory_upto=0,
        model="studio/scripted",
    )
    rows = list(ToolCall.objects.filter(run=run).order_by("pk"))
    assert [(r.call_id, r.input["city"], r.tool_id, r.step) for r in rows] == [
        ("c0", "Paris", tool.pk, 1),
        ("c1", "Oslo", tool.pk, 1),
        ("c2", "Lima", tool.pk, 1),
    ]
    assert pks == {r.call_id: r.pk for r in rows}
    assert {r.status for r in rows} == {ToolCallStatus.RUNNING}
    assert all(r.started_at and r.hook_decisions == [] and r.output is None for r in rows)
    parts = Message.objects.get(pk=message_id).parts
    assert parts[0] == {"type": "text", "text": "Looking."}
    assert [p["toolCallId"] for p in parts[1:]] == ["c0", "c1", "c2"]
    run.refresh_from_db()
    assert (run.step, run.model) == (1, "studio/scripted")


def test_a_step_that_produced_nothing_removes_its_message_and_keeps_the_model(started):
    from agents_core.models import Message, Run
    from agents_core.runtime.storage import store

    run, message_id = started
    Run.objects.filter(pk=run.pk).update(model="earlier/model")
    pks = store.step_save(
        run_id=run.pk, thread_id=run.thread_id, step=2, text="", calls=[], message_id=message_id
    )
    assert pks == {}
    assert not Message.objects.filter(pk=message_id).exists()
    run.refresh_from_db()
    assert (run.step, run.model) == (2, "earlier/model")


def test_nul_in_arguments_and_results_is_stored_as_the_replacement_character(started):
    from agents_core.models import Message, MessageRole, ToolCall, ToolCallStatus

    run, message_id = started
    call_pk = save_one_call(
        run,
        message_id,
        text="a\x00b",
        call={"input": {"q": "x\x00"}, "inputText": '{"q": "x\x00"}'},
    )
    finish_call(
        run,
        call_pk,
        status=ToolCallStatus.FAILED,
        output={"log": "\x00"},
        model_output={"error": "bad\x00"},
        display={"log": "\x00"},
        error="boom\x00",
        hook_decisions=[{"hook": "after_tool_call", "reason": "\x00"}],
    )
    call = ToolCall.objects.get(pk=call_pk)
    assert call.input == {"q": "x\ufffd"} and call.input_text == '{"q": "x\ufffd"}'
    assert call.output == {"log": "\ufffd"} and call.model_output == {"error": "bad\ufffd"}
    assert call.error == "boom\ufffd" and call.finished_at is not None
    assert call.status == ToolCallStatus.FAILED
    assert call.hook_decisions == [{"hook": "after_tool_call", "reason": "\ufffd"}]
    assert Message.objects.get(pk=message_id).parts[0]["text"] == "a\ufffdb"
    result = Message.objects.get(run=run, role=MessageRole.TOOL).parts
    assert result == [
        {
            "type": "tool-result",
            "toolCallId": "c",
            "toolName": "t",
            "output": {"log": "\ufffd"},
            "isError": True,
            "error": "boom\ufffd",
            "status": ToolCallStatus.FAILED,
            "modelOutput": {"error": "bad\ufffd"},
        }
    ]


def test_a_result_without_hook_decisions_keeps_the_calls_own(started):
    from agents_core.models import ToolCall, ToolCallStatus

    run, message_id = started
    call_pk = save_one_call(run, message_id, text="", call={"input": None, "inputText": ""})
    ToolCall.objects.filter(pk=call_pk).update(hook_decisions=[{"hook": "before_tool_call"}])
    finish_call(
        run, call_pk, status=ToolCallStatus.COMPLETED, output=None, model_output=None, display=None
    )
    call = ToolCall.objects.get(pk=call_pk)
    assert call.hook_decisions == [{"hook": "before_tool_call"}]
    assert call.input is None and call.output is None and call.model_output is None
