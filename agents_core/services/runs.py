"""Runs: start, resume, abort, client tool results, async tool completion.

These are synchronous services (REST views, consumers through database_sync_to_async,
Celery tasks, Python). They write the rows a run needs and start its execution with
`transaction.on_commit(launch)`, so nothing runs on rows that are not committed; the
execution itself is agents_core.runtime.loop.
"""

from __future__ import annotations

import json
import re
from datetime import timedelta
from typing import Any

from django.conf import settings
from django.db import IntegrityError, transaction
from django.utils import timezone

from agents_core.models import (
    Message,
    MessageRole,
    Run,
    RunStatus,
    Thread,
    ToolCall,
    ToolCallStatus,
)
from agents_core.runtime import active as active_runs
from agents_core.runtime.events import events_emit_sync
from agents_core.runtime.worker import QUEUED, process_is_dead, queue_marker
from agents_core.services.run_options import run_options_check
from agents_core.services.threads import title_summary
from studio.exceptions import ApplicationError, Conflict, NotFound

_YES = re.compile(r"^\s*(yes|y|ok|okay|sure|approve[sd]?|go( ahead)?|lgtm|do it)\b", re.I)


def _check_owner(thread: Thread, user: Any) -> None:
    if user is None or thread.owner_id != getattr(user, "pk", None):
        raise NotFound("No such thread.", code="not_found")


def suspended_run(thread: Thread) -> Run | None:
    return thread.runs.filter(status=RunStatus.SUSPENDED).order_by("-created_at").first()


def run_start(
    *, thread: Thread, message: str, user: Any, options: dict[str, Any] | None = None
) -> Run:
    """Start a run with the user's chat message (or, with auto-resume on and a call
    waiting, answer that call with it). Raises IntegrityError when a run is running."""
    _check_owner(thread, user)
    text = (message or "").strip()
    if not text:
        raise ApplicationError("The message is empty.", code="empty_message")
    stored, hooks = run_options_check(agent=thread.agent, options=options)
    waiting = suspended_run(thread)
    if waiting is not None:
        merged = {**(thread.agent.default_options or {}), **(waiting.options or {}), **stored}
        if merged.get("autoResume"):
            call = waiting.tool_calls.filter(status=ToolCallStatus.SUSPENDED).first()
            if call is not None:
                payload = payload_from_text(call.suspend_payload or {}, text)
                return run_resume(
                    run=waiting, tool_call_id=call.call_id, payload=payload, user=user
                )
        _supersede(waiting)
    with transaction.atomic():
        run = Run.objects.create(
            thread=thread,
            agent=thread.agent,
            status=RunStatus.RUNNING,
            options=stored,
            started_by=user,
            state={"message": text},
            worker=queue_marker(),
        )
        Message.objects.create(
            thread=thread, run=run, role=MessageRole.USER, parts=[{"type": "text", "text": text}]
        )
        if not thread.title and (thread.agent.default_options or {}).get("generateTitle", True):
            Thread.objects.filter(pk=thread.pk).update(title=title_summary(text))
    active_runs.remember_hooks(run.id, hooks)
    transaction.on_commit(lambda: active_runs.launch(run.id))
    return run


def run_start_safe(
    *, thread: Thread, message: str, user: Any, options: dict[str, Any] | None = None
) -> Run:
    """run_start for REST and websockets: a running run is a 409, not an IntegrityError."""
    for attempt in range(2):
        try:
            with transaction.atomic():
                return run_start(thread=thread, message=message, user=user, options=options)
        except IntegrityError:
            if attempt == 0 and _recover_stale(thread):
                continue
            raise Conflict(
                "A run is already streaming on this thread; wait for it to finish or stop it.",
                code="run_running",
            ) from None
    raise AssertionError("unreachable")


def _recover_stale(thread: Thread) -> bool:
    """A run left `running` by a process that died would block its thread for ever: end it
    as failed. Dead: not executing here, nothing published for STUDIO_RUN_WORKER_DEAD_SECONDS
    and its process's heartbeat as old; a queued run (no process yet) after
    STUDIO_RUN_STALE_SECONDS of silence."""
    run = thread.runs.filter(status=RunStatus.RUNNING).first()
    if run is None or active_runs.get(run.pk) is not None:
        return False
    last = run.events.order_by("-seq").values_list("created_at", flat=True).first() or (
        run.created_at
    )
    if run.worker and run.worker != QUEUED:
        # Its process beats while it executes runs: silent (and the run too) means dead.
        dead_after = float(settings.STUDIO_RUN_WORKER_DEAD_SECONDS)
        if last > timezone.now() - timedelta(seconds=dead_after) or not process_is_dead(
            name=run.worker, dead_after=dead_after
        ):
            return False
    elif last > timezone.now() - timedelta(
        seconds=getattr(settings, "STUDIO_RUN_STALE_SECONDS", 600)
    ):
        return False  # queued (or from before heartbeats): only a long silence tells
    return run_end_interrupted(run=run, expect_worker=run.worker)


INTERRUPTED = "The run was interrupted (its server process stopped) and was ended."


def run_end_interrupted(*, run: Run, expect_worker: str | None = None) -> bool:
    """End a run whose process died as failed (`run-error`, code `interrupted`), its open
    tool calls too. Only a run still `running` (and, when given, still claimed by
    `expect_worker`) moves; False when another process got there first."""
    with transaction.atomic():
        rows = Run.objects.filter(pk=run.pk, status=RunStatus.RUNNING)
        if expect_worker is not None:
            rows = rows.filter(worker=expect_worker)
        if rows.update(status=RunStatus.FAILED, error=INTERRUPTED, finished_at=timezone.now()) != 1:
            return False
        run.tool_calls.filter(status__in=[ToolCallStatus.RUNNING, ToolCallStatus.STREAMING]).update(
            status=ToolCallStatus.FAILED, error=INTERRUPTED
        )
        events_emit_sync(
            thread_id=run.thread_id,
            run_id=run.pk,
            events=[
                {
                    "type": "run-error",
                    "runId": str(run.pk),
                    "error": INTERRUPTED,
                    "code": "interrupted",
                }
            ],
        )
    return True


SUPERSEDED = "Not answered: the user sent a new message instead."
STOPPED = "Stopped: the run was stopped before this was answered."


def _supersede(run: Run, *, error: str = SUPERSEDED, finish_reason: str = "superseded") -> None:
    """The user moved on without answering (a new message, or Stop): close the waiting
    calls with `error` so memory stays valid."""
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
        calls = list(
            run.tool_calls.filter(status__in=[ToolCallStatus.SUSPENDED, ToolCallStatus.RUNNING])
        )
        for call in calls:
            ToolCall.objects.filter(pk=call.pk).update(
                status=ToolCallStatus.SKIPPED, error=error, finished_at=now
            )
            Message.objects.create(
                thread=run.thread,
                run=run,
                role=MessageRole.TOOL,
                parts=[
                    {
                        "type": "tool-result",
                        "toolCallId": call.call_id,
                        "toolName": call.tool_name,
                        "output": None,
                        "modelOutput": {"error": error},
                        "isError": True,
                        "error": error,
                        "status": ToolCallStatus.SKIPPED,
                    }
                ],
            )
            events.append(
                {
                    "type": "tool-error",
                    "runId": str(run.pk),
                    "toolCallId": call.call_id,
                    "toolName": call.tool_name,
                    "error": error,
                }
            )
        events.append(
            {
                "type": "run-finish",
                "runId": str(run.pk),
                "status": "aborted",
                "finishReason": finish_reason,
            }
        )
        events_emit_sync(thread_id=run.thread_id, run_id=run.pk, events=events)


def payload_from_text(suspend_payload: dict[str, Any], text: str) -> dict[str, Any]:
    """Auto-resume: the chat message as the answer the waiting call expects."""
    kind = suspend_payload.get("kind")
    if kind in ("approval", "plan-approval"):
        return {"approved": bool(_YES.match(text)), "reason": text}
    if kind == "ask-user":
        if suspend_payload.get("mode") == "multi":
            return {"answer": [part.strip() for part in text.split(",") if part.strip()]}
        return {"answer": text}
    if kind == "client-function":
        return {"output": text}
    try:
        value = json.loads(text)
    except ValueError:
        return {"answer": text}
    return value if isinstance(value, dict) else {"answer": value}


def run_resume(*, run: Run, tool_call_id: str, payload: Any, user: Any) -> Run:
    """Answer a suspended call and continue the run in a new stream."""
    from agents_core.runtime.loop import resume_schema_for
    from agents_core.runtime.setup import load_setup
    from tools_app.validation import schema_errors

    _check_owner(run.thread, user)
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
    _check_owner(run.thread, user)
    if run.status == RunStatus.SUSPENDED:
        _supersede(run, error=STOPPED, finish_reason="stopped")
    elif run.status == RunStatus.RUNNING:
        with transaction.atomic():
            locked = Run.objects.select_for_update().get(pk=run.pk)
            locked.state = {**(locked.state or {}), "abortRequested": True}
            locked.save(update_fields=["state"])
        # This process may be the one running it; otherwise the run polls the flag.
        active_runs.request_abort(run.pk)
    else:
        raise Conflict(f"The run is already {run.status}.", code="not_running")
    run.refresh_from_db()
    return run


def thread_active_run(*, thread: Thread) -> Run | None:
    return (
        thread.runs.filter(status__in=[RunStatus.RUNNING, RunStatus.SUSPENDED])
        .order_by("-created_at")
        .first()
    )
