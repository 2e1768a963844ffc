"""Tool runs: the async path (enqueue, claim, complete, sweep), the push to the owner's
browsers, and the reads the API needs.

Async runs survive a dead worker: the task is acks_late (redelivered if the worker dies),
the row is claimed with a conditional update (pending -> running, attempts + 1; a second
delivery finds it claimed and does nothing), completion only writes a row still running
(idempotent), and `tool_runs_sweep` (Celery beat, every minute) re-queues a run stuck in
running past its timeout, or fails it visibly after MAX_ATTEMPTS.
"""

from __future__ import annotations

import logging
from datetime import datetime, timedelta
from typing import Any

from asgiref.sync import async_to_sync
from django.db import transaction
from django.db.models import F, QuerySet
from django.utils import timezone

from studio.layers import group_send_sync
from tools_app.execution import (
    ISOLATION_PREFIX,
    ExecutionContext,
    ToolOutcome,
    logs_with_isolation,
    run_tool,
)
from tools_app.models import ExecutionMode, Tool, ToolRun, ToolRunStatus
from tools_app.types import get_type

logger = logging.getLogger(__name__)

MAX_ATTEMPTS = 3
# A running run is presumed lost when its tool's timeout plus this margin has passed.
STUCK_GRACE_SECONDS = 30.0
# A pending run nobody claimed for this long is enqueued again (a lost message).
UNCLAIMED_SECONDS = 600.0


def tool_runs_group(user_id: int) -> str:
    return f"tool_runs_{user_id}"


# --- reads --------------------------------------------------------------------------------
def tool_run_list(*, user: Any, tool: Tool) -> QuerySet[ToolRun]:
    return ToolRun.objects.filter(tool=tool, created_by=user).select_related("tool")


def tool_run_get(*, user: Any, run_id: Any) -> ToolRun | None:
    return ToolRun.objects.filter(id=run_id, created_by=user).select_related("tool").first()


def tool_run_data(run: ToolRun) -> dict[str, Any]:
    """The ToolRun JSON of the API, the websocket push and the CLI."""
    logs, isolation = run.logs, None
    if logs.startswith(ISOLATION_PREFIX):
        first, _, logs = logs.partition("\n")
        isolation = first[len(ISOLATION_PREFIX) :]
    return {
        "id": str(run.id),
        "tool": run.tool.name,
        "status": run.status,
        "mode": run.mode,
        "input": run.input,
        "output": run.output,
        "model_output": run.model_output,
        "error": run.error,
        "errors": run.errors,
        "logs": logs,
        "isolation": isolation,
        "duration_ms": run.duration_ms,
        "attempts": run.attempts,
        "created_at": _iso(run.created_at),
        "started_at": _iso(run.started_at),
        "finished_at": _iso(run.finished_at),
    }


def _iso(value: datetime | None) -> str | None:
    return value.isoformat() if value else None


# --- the async path -----------------------------------------------------------------------
def tool_run_enqueue(*, tool: Tool, input: Any, user: Any) -> ToolRun:  # noqa: A002
    run = ToolRun.objects.create(
        tool=tool,
        status=ToolRunStatus.PENDING,
        mode=ExecutionMode.ASYNC,
        input=input,
        created_by=user if getattr(user, "is_authenticated", False) else None,
    )
    _enqueue_on_commit(run.id)
    return run


def _enqueue_on_commit(run_id: Any) -> None:
    transaction.on_commit(lambda: _enqueue(run_id))


def _enqueue(run_id: Any) -> None:
    from tools_app.tasks import tool_run_execute

    try:
        tool_run_execute.delay(str(run_id))
    except Exception:  # noqa: BLE001 - the broker is down: the row stays pending, visibly
        # The caller still gets its pending run; the sweep enqueues it again later.
        logger.exception("Could not enqueue tool run %s; the sweep will retry", run_id)


def tool_run_claim(*, run_id: Any) -> bool:
    """pending -> running for exactly one worker; False when someone got there first."""
    claimed = ToolRun.objects.filter(id=run_id, status=ToolRunStatus.PENDING).update(
        status=ToolRunStatus.RUNNING, attempts=F("attempts") + 1, started_at=timezone.now()
    )
    return claimed == 1


def tool_run_process(*, run_id: Any) -> ToolRun | None:
    """What the Celery task does: claim, execute, complete. No-op if already claimed."""
    if not tool_run_claim(run_id=run_id):
        return None
    run = ToolRun.objects.select_related("tool", "created_by").get(id=run_id)
    outcome = async_to_sync(run_tool)(run.tool, run.input, ExecutionContext(user=run.created_by))
    tool_run_complete(run=run, outcome=outcome)
    run.refresh_from_db()
    return run


def tool_run_complete(*, run: ToolRun, outcome: ToolOutcome) -> bool:
    """Write the outcome once: only a row still running is updated."""
    status, output, error = outcome.status, outcome.output, outcome.error
    if status == "suspended":
        status, output = ToolRunStatus.FAILED, outcome.suspend_payload
        error = "This tool waits for a person's answer; it completes in the preview chat."
    with transaction.atomic():
        done = ToolRun.objects.filter(id=run.id, status=ToolRunStatus.RUNNING).update(
            status=status,
            output=output,
            model_output=outcome.model_output,
            error=error,
            errors=outcome.errors,
            logs=logs_with_isolation(outcome),
            duration_ms=outcome.duration_ms,
            finished_at=timezone.now(),
        )
        if done:
            transaction.on_commit(lambda: tool_run_notify(run_id=run.id))
    return done == 1


def tool_run_notify(*, run_id: Any) -> None:
    """Push the finished run to its owner's browsers (websocket /ws/tool-runs/)."""
    run = ToolRun.objects.select_related("tool").get(id=run_id)
    if run.created_by_id is None:
        return
    group_send_sync(
        tool_runs_group(run.created_by_id), {"type": "tool.run", "run": tool_run_data(run)}
    )


def _wait_seconds(tool: Tool) -> float:
    """How long a run of `tool` may take, queue included (see ToolType.wait_seconds)."""
    try:
        return get_type(tool.kind).wait_seconds(tool)
    except LookupError:
        return tool.timeout_seconds


def tool_runs_sweep(
    *, now: datetime | None = None, grace: float = STUCK_GRACE_SECONDS
) -> dict[str, list[str]]:
    """Re-queue runs whose worker died (or fail them after MAX_ATTEMPTS); re-enqueue
    pending runs nobody claimed for long. Safe to run concurrently: every move is a
    conditional update."""
    now = now or timezone.now()
    report: dict[str, list[str]] = {"requeued": [], "failed": [], "reenqueued": []}
    running = ToolRun.objects.filter(status=ToolRunStatus.RUNNING, mode=ExecutionMode.ASYNC)
    for run in running.select_related("tool"):
        started = run.started_at or run.created_at
        if started + timedelta(seconds=_wait_seconds(run.tool) + grace) > now:
            continue
        same = ToolRun.objects.filter(
            id=run.id, status=ToolRunStatus.RUNNING, attempts=run.attempts
        )
        if run.attempts < MAX_ATTEMPTS:
            if same.update(status=ToolRunStatus.PENDING):
                _enqueue_on_commit(run.id)
                report["requeued"].append(str(run.id))
        elif same.update(
            status=ToolRunStatus.FAILED,
            finished_at=now,
            error=f"The worker running this tool stopped (crashed or was killed) "
            f"{run.attempts} times; the run was given up after {MAX_ATTEMPTS} attempts.",
        ):
            transaction.on_commit(lambda run_id=run.id: tool_run_notify(run_id=run_id))
            report["failed"].append(str(run.id))
    unclaimed = ToolRun.objects.filter(
        status=ToolRunStatus.PENDING,
        mode=ExecutionMode.ASYNC,
        created_at__lt=now - timedelta(seconds=UNCLAIMED_SECONDS),
    )
    for run_id in unclaimed.values_list("id", flat=True):
        _enqueue_on_commit(run_id)
        report["reenqueued"].append(str(run_id))
    return report
