"""The run loop's writes of its steps and tool calls (synchronous; the loop calls them
through runtime.db): the parts and fields a step or a result stores, written by the one
statement each of runtime/storage/store_sql.py. The run's own state moves are services/runs.py's."""

from __future__ import annotations

from typing import Any

from django.db import transaction
from django.db.models import Q
from django.utils import timezone

from agents_core.models import Message, MessageRole, Run, RunStatus, ToolCall, ToolCallStatus
from agents_core.runtime.run import plugins
from agents_core.runtime.storage import store_sql
from agents_core.runtime.storage.messages import thread_memory
from agents_core.runtime.storage.store_sql import MemoryCall, MemoryRow


def step_begin(
    *, run: Run, limit: int | None
) -> tuple[list[Any], list[MemoryRow], dict[tuple[Any, str], MemoryCall], int]:
    """What a model step reads and writes before its call, in one trip to the database
    thread: the signals drained into the run (plugins), then the thread's memory (after
    the drain, so the model sees each signal once), then the step's message. Returns
    (drained, memory rows, their tool calls, the step's message id)."""
    drained = plugins.before_model_call(run)
    rows, calls = thread_memory(run.thread_id, limit)
    return drained, rows, calls, store_sql.message_start(run_id=run.pk, thread_id=run.thread_id)


def _renumber_unseen(*, thread_id: Any, message_id: int, memory_upto: int | None) -> None:
    """Signals the step's model call did not see (numbered after the memory it read but
    before its message: they committed in between) move after the step's message, so the
    next model call gets them as news instead of as something already answered."""
    if memory_upto is None:
        return
    unseen = list(
        Message.objects.filter(
            thread_id=thread_id,
            role=MessageRole.SIGNAL,
            pk__gt=memory_upto,
            pk__lt=message_id,
        ).order_by("pk")
    )
    for row in unseen:
        Message.objects.filter(pk=row.pk).delete()
        Message.objects.create(
            thread_id=row.thread_id, run_id=row.run_id, role=row.role, parts=row.parts
        )


def step_save(
    *,
    run_id: Any,
    thread_id: Any,
    step: int,
    text: str,
    calls: list[dict[str, Any]],
    message_id: int,
    memory_upto: int | None = None,
    model: str | None = None,
) -> dict[str, int]:
    """The assistant message of a step (`message_id`, created by `step_begin`) and its tool
    calls; returns {toolCallId: ToolCall pk}.

    `memory_upto` is the last message the model call read (see `_renumber_unseen`);
    `model`, when given, is the model that answered, kept on the run with its step."""
    parts: list[dict[str, Any]] = []
    if text:
        parts.append({"type": "text", "text": text})
    for call in calls:
        parts.append(
            {
                "type": "tool-call",
                "toolCallId": call["id"],
                "toolName": call["name"],
                "input": call.get("display", call["input"]),
            }
        )
    pks, unseen = store_sql.step_save(
        run_id=run_id,
        thread_id=thread_id,
        step=step,
        parts=parts,
        calls=calls,
        message_id=message_id,
        memory_upto=memory_upto,
        model=model,
    )
    if unseen:  # rare: a signal committed while the model call started
        with transaction.atomic():
            _renumber_unseen(thread_id=thread_id, message_id=message_id, memory_upto=memory_upto)
    return pks


def tool_result_save(
    *,
    run_id: Any,
    thread_id: Any,
    call_pk: int,
    call_id: str,
    name: str,
    status: str,
    output: Any,
    model_output: Any,
    display: Any,
    error: str = "",
    hook_decisions: list | None = None,
    message: bool = True,
    model_visible: bool = True,
) -> None:
    """Finish a tool call and add its result to the transcript (a pending call, handed to a
    worker, is recorded without finishing it)."""
    fields: dict[str, Any] = {
        "status": status,
        "output": output,
        "model_output": model_output,
        "error": error,
        "finished_at": None if status == ToolCallStatus.PENDING else timezone.now(),
    }
    if hook_decisions is not None:
        fields["hook_decisions"] = hook_decisions
    if not message:
        ToolCall.objects.filter(pk=call_pk).update(**fields)
        return
    part = {
        "type": "tool-result",
        "toolCallId": call_id,
        "toolName": name,
        "output": display,
        "isError": status == ToolCallStatus.FAILED,
        "error": error,
        "status": status,
    }
    if model_visible:
        part["modelOutput"] = model_output
    store_sql.tool_result_save(
        run_id=run_id, thread_id=thread_id, call_pk=call_pk, fields=fields, part=part
    )


def tool_call_update(*, call_pk: int, **fields: Any) -> None:
    ToolCall.objects.filter(pk=call_pk).update(**fields)


def runs_abort_requested(run_ids: list[Any]) -> list[Any]:
    """Which of these runs were asked to stop (or ended as aborted) by another process."""
    return list(
        Run.objects.filter(pk__in=run_ids)
        .filter(Q(status=RunStatus.ABORTED) | Q(state__abortRequested=True))
        .values_list("pk", flat=True)
    )


def step_calls(*, run_id: Any, step: int) -> list[ToolCall]:
    return list(
        ToolCall.objects.filter(run_id=run_id, step=step).select_related("tool").order_by("id")
    )
