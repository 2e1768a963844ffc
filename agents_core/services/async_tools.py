"""Async tool calls of a run: handed to a Celery worker as a ToolRun, completed when the
ToolRun finishes.

The run gets `{"status": "pending"}` at once; the worker's result is recorded on the call,
added to the thread's memory as a `<context>` message for the model's next call, and
published as `tool-result` / `tool-error` (with `async: true`). The completion runs inside
the transaction that records the ToolRun's final state (tools_app's `tool_run_finished`),
so a run recovered after its worker died completes the call too, and a call moves from
pending once: two completions of one call leave one result.
"""

from __future__ import annotations

import json
from typing import Any

from django.db import transaction
from django.utils import timezone

from agents_core.models import Message, MessageRole, ToolCall, ToolCallStatus
from agents_core.runtime.bus.events import events_emit_sync
from agents_core.runtime.run import observers
from agents_core.runtime.storage import store
from common.exceptions import ApplicationError
from tools_app.models import ToolRun, ToolRunStatus
from tools_app.services.runs import tool_run_data, tool_run_enqueue


def tool_call_enqueue_async(*, call_pk: int, user: Any, pending: dict[str, Any]) -> None:
    """Hand an async tool call to a Celery worker (a ToolRun linked to the call).

    `pending`: the arguments of `store.tool_result_save` that record the call as pending
    in the transcript. They are written in the same transaction, before the task is
    enqueued (on commit): a worker faster than the run would otherwise complete the call
    first and have its result overwritten by "pending"."""
    call = ToolCall.objects.select_related("tool").get(pk=call_pk)
    if call.tool is None:
        raise ApplicationError("The tool of this call no longer exists.", code="tool_gone")
    with transaction.atomic():
        store.tool_result_save(call_pk=call_pk, status=ToolCallStatus.PENDING, **pending)
        tool_run_enqueue(tool=call.tool, input=call.input, user=user, tool_call=call)


def context_text(name: str, status: str, value: Any) -> str:
    body = json.dumps(value, ensure_ascii=False, default=str)
    if status == ToolCallStatus.COMPLETED:
        return f"<context>function [{name}] completed with response {body}</context>"
    return f"<context>function [{name}] failed with error {body}</context>"


def tool_run_finished_receiver(*, run_id: Any, **_: Any) -> None:
    """tools_app's `tool_run_finished`: complete the chat's tool call the run served."""
    tool_call_async_complete(tool_run_id=run_id)


def tool_call_async_complete(*, tool_run_id: Any) -> ToolCall | None:
    """A worker finished an async tool: record it on the call, add the result to the
    thread's next turn, tell the subscribers. Idempotent (only a pending call moves)."""
    tool_run = ToolRun.objects.select_related("tool_call__run").get(id=tool_run_id)
    call = tool_run.tool_call
    if call is None or tool_run.status not in (ToolRunStatus.COMPLETED, ToolRunStatus.FAILED):
        return None
    status = (
        ToolCallStatus.COMPLETED
        if tool_run.status == ToolRunStatus.COMPLETED
        else ToolCallStatus.FAILED
    )
    run = call.run
    with transaction.atomic():
        moved = ToolCall.objects.filter(pk=call.pk, status=ToolCallStatus.PENDING).update(
            status=status,
            output=tool_run.output,
            model_output=tool_run.model_output,
            error=tool_run.error,
            finished_at=timezone.now(),
        )
        if moved != 1:
            return None
        value = (
            tool_run.model_output
            if status == ToolCallStatus.COMPLETED
            else {"error": tool_run.error}
        )
        Message.objects.create(
            thread_id=run.thread_id,
            run=run,
            role=MessageRole.SIGNAL,
            parts=[
                {
                    "type": "context",
                    "text": context_text(call.tool_name, status, value),
                    "toolCallId": call.call_id,
                    "toolName": call.tool_name,
                }
            ],
        )
        event = {
            "runId": str(run.pk),
            "toolCallId": call.call_id,
            "toolName": call.tool_name,
            "async": True,
            "durationMs": tool_run.duration_ms,
        }
        if status == ToolCallStatus.COMPLETED:
            event.update(type="tool-result", output=tool_run.output)
        else:
            event.update(type="tool-error", error=tool_run.error, output=tool_run.output)
        events_emit_sync(thread_id=run.thread_id, run_id=run.pk, events=[event])
        observers.notify(
            "async_tool_finished",
            str(run.pk),
            call_id=call.call_id,
            status=status,
            output=tool_run.output,
            error=tool_run.error,
            duration_ms=tool_run.duration_ms,
            worker=tool_run.worker,
            isolation=tool_run_data(tool_run)["isolation"],
            attempts=tool_run.attempts,
        )
    call.refresh_from_db()
    return call
