"""Run state: every transition of a run, and the one read of a thread's current run.

A run is started (`run_start`, with its origin: a chat message, a signal, a sub-agent
call; chat messages that come together: `runs_start`, with the same checks and rows),
claimed by a run worker (`runs_claim`), suspended on a call that waits for an answer
(`run_suspend`), resumed with that answer (`run_resume`), ended by its loop as completed,
failed or aborted (`run_finish`), asked to stop (`run_abort`), closed unanswered when the
user moves on (`run_supersede`) and ended as interrupted when its process died
(`run_end_interrupted`, from `run_recover_stale` and the run workers). docs/runs.md says
who calls each.

These are synchronous services (REST views, consumers through database_sync_to_async, the
run loop through runtime.db, Celery tasks). A run that is to execute is launched with
`transaction.on_commit`, so nothing runs on rows that are not committed.
"""

from __future__ import annotations

import contextlib
from datetime import timedelta
from typing import Any

from django.conf import settings
from django.db import DatabaseError, IntegrityError, transaction
from django.utils import timezone

from agents_core.models import (
    OPEN_CALLS,
    Message,
    MessageRole,
    Run,
    RunStatus,
    Thread,
    ToolCall,
    ToolCallStatus,
)
from agents_core.runtime.bus.events import events_emit_sync
from agents_core.runtime.bus.handoff import events_store
from agents_core.runtime.execution import active as active_runs
from agents_core.runtime.execution.processes import QUEUED, process_is_dead, queue_marker
from agents_core.runtime.run.setup import load_setup
from agents_core.runtime.run.suspend_payloads import payload_from_text, resume_schema_for
from agents_core.services import run_rows
from agents_core.services.run_rows import CHAT, SignalInput, Start, check_owner
from agents_core.services.thread_titles import TITLE_TASK, title_wanted
from common.exceptions import ApplicationError, Conflict, NotFound
from studio.celery import app as celery_app
from tools_app.validation import schema_errors

INTERRUPTED = "The run was interrupted (its server process stopped) and was ended."
SUPERSEDED = "Not answered: the user sent a new message instead."
STOPPED = "Stopped: the run was stopped before this was answered."


def thread_active_run(*, thread: Thread, suspended: bool = False) -> Run | None:
    """The thread's running run (at most one: a constraint). With `suspended`, a run
    waiting for an answer counts too: the chat shows it as the thread's current run."""
    runs = Run.objects.running() if not suspended else Run.objects.active()
    return runs.filter(thread=thread).order_by("-created_at").first()


def run_start(
    *,
    thread: Thread,
    message: str,
    user: Any,
    options: dict[str, Any] | None = None,
    origin: str = CHAT,
    signal: SignalInput | None = None,
) -> Run:
    """Start a run on `thread` with `message` as its input, checked and written as every
    new run is (run_rows: `new_run`, `runs_insert`). A chat message or a signal first
    answers a suspended call with auto-resume on, or supersedes it; the run launches once
    committed. A sub-agent run is not launched: its caller executes it inline.
    Raises IntegrityError when a run is running on the thread."""
    new = run_rows.new_run(Start(thread, message, user, options, origin, signal))
    waiting = None
    if getattr(thread, "has_suspended", True):  # read with the thread (thread_for) or now
        waiting = thread.runs.filter(status=RunStatus.SUSPENDED).order_by("-created_at").first()
    if waiting is not None:
        merged = {**(thread.agent.default_options or {}), **(waiting.options or {})}
        merged.update(new.run.options)
        call = waiting.tool_calls.filter(status=ToolCallStatus.SUSPENDED).first()
        if merged.get("autoResume") and call is not None:
            payload = payload_from_text(call.suspend_payload or {}, (message or "").strip())
            return run_resume(run=waiting, tool_call_id=call.call_id, payload=payload, user=user)
        run_supersede(waiting)
    # No savepoint inside a caller's transaction: a failure rolls the caller's block back.
    with transaction.atomic(savepoint=False):
        run_rows.runs_insert([new])
    return new.run


def run_start_safe(*, thread: Thread, **start: Any) -> Run:
    """run_start (its arguments) for REST, websockets and `runs_start`: a running run is a
    409, not an IntegrityError (after a stale one is ended, the start is tried again)."""
    for attempt in range(2):
        try:
            with transaction.atomic():
                return run_start(thread=thread, **start)
        except IntegrityError:
            if attempt == 0 and run_recover_stale(thread=thread):
                continue
            raise Conflict(
                "A run is already streaming on this thread; wait for it to finish or stop it.",
                code="run_running",
            ) from None
    raise AssertionError("unreachable")


def runs_start(starts: list[Start]) -> list[Run | Exception]:
    """Start runs together, each with its outcome: its run, or the error
    `run_start_safe` raises for it (a refused one: the others still start). Those on
    threads read with no run waiting or running (`has_suspended`, `has_running`:
    selectors.threads_for_messages) are written in one transaction, one statement per
    kind for all; the others (a suspended run to answer or close, a running one, a thread
    another start took) go through `run_start_safe` after them, as all do when the batch's
    statement fails (a run started on a thread meanwhile): it is written whole or not."""
    results: list[Any] = [None] * len(starts)
    alone: list[int] = []
    together: list[tuple[int, run_rows.NewRun]] = []
    taken: set[Any] = set()
    for index, start in enumerate(starts):
        try:
            new = run_rows.new_run(start)
        except ApplicationError as exc:
            results[index] = exc
            continue
        thread = start.thread
        busy = getattr(thread, "has_suspended", True) or getattr(thread, "has_running", True)
        if busy or thread.pk in taken:
            alone.append(index)
        else:
            taken.add(thread.pk)
            together.append((index, new))
    if together:
        try:
            with transaction.atomic():
                run_rows.runs_insert([new for _, new in together])
        except DatabaseError:
            alone += [index for index, _ in together]
        else:
            for index, new in together:
                results[index] = new.run
    for index in sorted(alone):
        try:
            results[index] = run_start_safe(**vars(starts[index]))
        except Exception as exc:  # noqa: BLE001 - each start gets its own outcome
            results[index] = exc
    return results


def runs_claim(*, worker: str, limit: int) -> list[str]:
    """Take up to `limit` queued runs for the run worker `worker`, oldest first, skipping
    rows another worker is claiming at this moment."""
    if limit <= 0:
        return []
    with transaction.atomic():
        ids = list(
            Run.objects.select_for_update(skip_locked=True, no_key=True)
            .filter(status=RunStatus.RUNNING, worker=QUEUED)
            .order_by("created_at")
            .values_list("pk", flat=True)[:limit]
        )
        if ids:
            Run.objects.filter(pk__in=ids).update(worker=worker)
    return [str(pk) for pk in ids]


def run_suspend(
    *, run_id: Any, call_pk: int, payload: dict[str, Any], state: dict[str, Any], hooks: list
) -> None:
    """The loop stops on a call that waits for an answer; `state` names it and its step."""
    with transaction.atomic():
        ToolCall.objects.filter(pk=call_pk).update(
            status=ToolCallStatus.SUSPENDED, suspend_payload=payload, hook_decisions=hooks
        )
        Run.objects.filter(id=run_id).update(status=RunStatus.SUSPENDED, state=state)


def run_finish(
    *,
    run_id: Any,
    status: str,
    error: str = "",
    usage: dict[str, Any] | None = None,
    text: str = "",
    thread_id: Any = None,
    partial_text: str = "",
    message_id: int | None = None,
    model: str = "",
    calls_open: bool = True,
    title: bool | None = None,
    events: list[dict[str, Any]] | None = None,
) -> list[str]:
    """The loop ends its run as completed, failed or aborted. What the streaming step
    produced is kept (`message_id`, its row; `partial_text`, what it streamed), calls
    still open fail (`calls_open=False`: the loop knows none is), and `model` (when given)
    is kept as the one that answered last. `title`: whether the thread waited for its
    summarised title when the run loaded it (None: read now); the title task writes only
    while it still waits.

    `events` (its `run-finish` or `run-error`, on `thread_id`) are numbered by the database
    and stored in the same transaction (returned as JSON text, for the loop to deliver): no
    process numbers the thread's events, its run's sink released them and no other run
    runs on the thread while this one does."""
    several = message_id is not None or bool(partial_text) or calls_open or bool(events)
    texts: list[str] = []
    with transaction.atomic() if several else contextlib.nullcontext():
        if message_id is not None:
            if partial_text:
                Message.objects.filter(pk=message_id, parts=[]).update(
                    parts=[{"type": "text", "text": partial_text}]
                )
            Message.objects.filter(pk=message_id, parts=[]).delete()
        elif partial_text and thread_id is not None:
            Message.objects.create(
                thread_id=thread_id,
                run_id=run_id,
                role=MessageRole.ASSISTANT,
                parts=[{"type": "text", "text": partial_text}],
            )
        if calls_open:
            ToolCall.objects.filter(run_id=run_id, status__in=OPEN_CALLS).update(
                status=ToolCallStatus.FAILED,
                error="The run ended before this call finished.",
                finished_at=timezone.now(),
            )
        Run.objects.filter(id=run_id).update(
            status=status,
            error=error,
            usage=usage or {},
            finished_at=timezone.now(),
            state={"finalText": text} if text else {},
            **({"model": model} if model else {}),
        )
        if events:
            # After the run's row, as run_end_interrupted locks them: never a deadlock.
            texts = events_store(thread_id=thread_id, run_id=run_id, events=events)
        if status == RunStatus.COMPLETED and (title_wanted(run_id) if title is None else title):
            # The model's title for the thread, off the run's path (services/thread_titles.py);
            # a broker that cannot take it is logged (robust), the run still ends.
            transaction.on_commit(
                lambda: celery_app.send_task(TITLE_TASK, args=[str(run_id)]), robust=True
            )
    return texts


def run_recover_stale(*, thread: Thread) -> bool:
    """A run left `running` by a process that died would block its thread for ever: end it
    as interrupted. Dead: not executing here, nothing published for
    STUDIO_RUN_WORKER_DEAD_SECONDS and its process's heartbeat as old; a queued run (no
    process yet) after STUDIO_RUN_STALE_SECONDS of silence."""
    run = thread_active_run(thread=thread)
    if run is None or active_runs.get(run.pk) is not None:
        return False
    last = run.events.order_by("-seq").values_list("created_at", flat=True).first()
    silent_since = timezone.now() - (last or run.created_at)
    if run.worker and run.worker != QUEUED:
        # Its process beats while it executes runs: silent (and the run too) means dead.
        dead_after = float(settings.STUDIO_RUN_WORKER_DEAD_SECONDS)
        if silent_since < timedelta(seconds=dead_after) or not process_is_dead(
            name=run.worker, dead_after=dead_after
        ):
            return False
    elif silent_since < timedelta(seconds=settings.STUDIO_RUN_STALE_SECONDS):
        return False  # queued (or executed by its caller): only a long silence tells
    return run_end_interrupted(run=run, expect_worker=run.worker)


def run_end_interrupted(*, run: Run, expect_worker: str | None = None) -> bool:
    """End a run whose process died as failed (`run-error`, code `interrupted`), its open
    tool calls too. Only a run still `running` (and, when given, still claimed by
    `expect_worker`) moves; False when another process got there first."""
    with transaction.atomic():
        rows = Run.objects.running().filter(pk=run.pk)
        if expect_worker is not None:
            rows = rows.filter(worker=expect_worker)
        if rows.update(status=RunStatus.FAILED, error=INTERRUPTED, finished_at=timezone.now()) != 1:
            return False
        run.tool_calls.filter(status__in=OPEN_CALLS).update(
            status=ToolCallStatus.FAILED, error=INTERRUPTED
        )
        event = {"type": "run-error", "runId": str(run.pk), "error": INTERRUPTED}
        events_emit_sync(
            thread_id=run.thread_id,
            run_id=run.pk,
            events=[{**event, "code": "interrupted"}],
            owner_gone=True,  # what its process sent and did not store is lost
        )
    return True


def run_supersede(run: Run, *, error: str = SUPERSEDED, finish_reason: str = "superseded") -> None:
    """The user moved on without answering a suspended run (a new message, or Stop): it
    ends as aborted, its waiting calls as skipped with `error` (a result in the transcript,
    so memory stays valid)."""
    now = timezone.now()
    events = []
    with transaction.atomic():
        if (
            Run.objects.filter(pk=run.pk, status=RunStatus.SUSPENDED).update(
                status=RunStatus.ABORTED, finished_at=now
            )
            != 1
        ):
            return
        waiting = [ToolCallStatus.SUSPENDED, ToolCallStatus.RUNNING]
        for call in run.tool_calls.filter(status__in=waiting):
            ToolCall.objects.filter(pk=call.pk).update(
                status=ToolCallStatus.SKIPPED, error=error, finished_at=now
            )
            result = {"toolCallId": call.call_id, "toolName": call.tool_name}
            part = {
                "type": "tool-result",
                **result,
                "output": None,
                "modelOutput": {"error": error},
                "isError": True,
                "error": error,
                "status": ToolCallStatus.SKIPPED,
            }
            Message.objects.create(thread=run.thread, run=run, role=MessageRole.TOOL, parts=[part])
            events.append({"type": "tool-error", "runId": str(run.pk), **result, "error": error})
        end = {"type": "run-finish", "runId": str(run.pk), "status": "aborted"}
        events.append({**end, "finishReason": finish_reason})
        events_emit_sync(thread_id=run.thread_id, run_id=run.pk, events=events)


def run_resume(*, run: Run, tool_call_id: str, payload: Any, user: Any) -> Run:
    """Answer a suspended call and continue the run in a new stream."""
    check_owner(run.thread, user)
    call = run.tool_calls.filter(call_id=tool_call_id).first()
    if call is None:
        raise NotFound(f"No tool call {tool_call_id!r} in this run.", code="not_found")
    if run.status != RunStatus.SUSPENDED or call.status != ToolCallStatus.SUSPENDED:
        raise Conflict(
            "This call is not waiting for an answer (already answered, or the run moved on).",
            code="not_suspended",
        )
    if not isinstance(payload, dict):
        raise ApplicationError("The payload must be a JSON object.", code="invalid_payload")
    spec = load_setup(run.id).specs.get(call.tool_name)
    errors = schema_errors(resume_schema_for(spec, call.suspend_payload), payload)
    if errors:
        first = errors[0]
        raise ApplicationError(
            f"The answer does not match: {first['path']}: {first['message']}",
            code="invalid_payload",
            extra={"errors": errors},
        )
    with transaction.atomic():
        claimed = Run.objects.filter(pk=run.pk, status=RunStatus.SUSPENDED).update(
            status=RunStatus.RUNNING,
            worker=queue_marker(),
            state={**(run.state or {}), "resume": {"toolCallId": tool_call_id}},
        )
        if claimed != 1:
            raise Conflict("This run was resumed already.", code="not_suspended")
        ToolCall.objects.filter(pk=call.pk).update(
            status=ToolCallStatus.RUNNING, resume_payload=payload
        )
    transaction.on_commit(lambda: active_runs.launch(run.id))
    run.refresh_from_db()
    return run


def client_tool_result(
    *, run: Run, tool_call_id: str, output: Any = None, error: str | None = None, user: Any
) -> Run:
    payload = {"error": str(error)} if error else {"output": output}
    return run_resume(run=run, tool_call_id=tool_call_id, payload=payload, user=user)


def run_abort(*, run: Run, user: Any) -> Run:
    """Stop a run: a streaming one ends as aborted (keeping what it produced), a suspended
    one is closed at once."""
    check_owner(run.thread, user)
    if run.status == RunStatus.SUSPENDED:
        run_supersede(run, error=STOPPED, finish_reason="stopped")
    elif run.status == RunStatus.RUNNING:
        with transaction.atomic():
            locked = Run.objects.select_for_update().get(pk=run.pk)
            locked.state = {**(locked.state or {}), "abortRequested": True}
            locked.save(update_fields=["state"])
        # Here, or a run worker is notified (and the run polls the flag).
        active_runs.request_abort(run.pk, elsewhere=True)
    else:
        raise Conflict(f"The run is already {run.status}.", code="not_running")
    run.refresh_from_db()
    return run
