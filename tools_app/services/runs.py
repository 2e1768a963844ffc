"""Tool runs: the async path (enqueue, claim under a lease, complete, recover), the push
to the owner's browsers, and the reads the API needs.

Delivery: a tool of an async run runs at least once, its result is recorded exactly once.
- The Celery task is acks_late, and the row is claimed with a conditional update that
  takes a lease (tools_app/services/leases.py): a second delivery of the message finds
  the run claimed and does nothing; the executing process renews the lease while the
  tool runs, so no other process takes the run while that one lives.
- A process that dies stops renewing; every Celery worker, at start-up and every
  STUDIO_TOOL_RUN_RECOVER_SECONDS (tools_app/recovery.py, not beat), puts a run whose
  lease expired back in the queue, or fails it visibly after STUDIO_TOOL_RUN_MAX_ATTEMPTS.
  The tool then runs again: `context.idempotency_key` (the run's id, the same for every
  attempt) lets it recognise a repeat, and HTTP and OpenAPI tools send it as the
  `Idempotency-Key` header.
- Completion writes only the attempt that holds the run, and sends `tool_run_finished`
  in the same transaction, so a chat's tool call is completed with it, once.
- Beat's `tool_runs_sweep` runs the same recovery, and also hands the broker again a
  pending run nobody claimed for UNCLAIMED_SECONDS (a lost message).
"""

from __future__ import annotations

import asyncio
import logging
from datetime import datetime, timedelta
from typing import Any

from asgiref.sync import async_to_sync, sync_to_async
from django.conf import settings
from django.db import transaction
from django.db.models import QuerySet
from django.db.models.functions import Coalesce
from django.utils import timezone

from studio.celery import app
from studio.layers import group_send_sync
from tools_app.execution import ExecutionContext, ToolOutcome, run_tool
from tools_app.models import ExecutionMode, Tool, ToolRun, ToolRunStatus
from tools_app.observers import tool_run_finished as observers_tool_run_finished
from tools_app.records import ISOLATION_PREFIX, outcome_fields
from tools_app.services.leases import (
    LeaseKeeper,
    expired_runs,
    lease_expired,
    lease_renew,
    tool_run_claim,
    worker_name,
)
from tools_app.signals import tool_run_finished
from tools_app.types.python.pool import OnWait

logger = logging.getLogger(__name__)

# The Celery task that runs one async tool run (tools_app.tasks registers it by this name;
# it is sent by name so that this module needs not import the tasks module that imports it).
TOOL_RUN_EXECUTE = "tools_app.tool_run_execute"
# A pending run nobody claimed for this long is handed to the broker again (a lost message).
UNCLAIMED_SECONDS = 600.0


def tool_runs_group(user_id: int) -> str:
    return f"tool_runs_{user_id}"


def tool_run_waiter(*, user_id: int, watch: str = "", run_id: str = "") -> OnWait:
    """An ExecutionContext.on_wait that tells the user's consoles (/ws/tool-runs/) that a
    run waits for a sandbox slot (`note`: why) or runs again (None). `watch` names a
    synchronous run (the console chose it when it sent the run), `run_id` an async one."""

    async def on_wait(note: str | None) -> None:
        state = {"watch": watch, "id": run_id, "note": note}
        message = {"type": "tool.run.state", "state": state}
        await sync_to_async(group_send_sync)(tool_runs_group(user_id), message)

    return on_wait


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
def tool_run_enqueue(
    *,
    tool: Tool,
    input: Any,  # noqa: A002
    user: Any,
    tool_call: Any = None,
) -> ToolRun:
    """A pending async run, handed to a Celery worker once the caller's transaction
    commits. `tool_call`: the chat's tool call it serves (completed with it)."""
    run = ToolRun.objects.create(
        tool=tool,
        status=ToolRunStatus.PENDING,
        mode=ExecutionMode.ASYNC,
        input=input,
        tool_call=tool_call,
        created_by=user if getattr(user, "is_authenticated", False) else None,
        enqueued_at=timezone.now(),
    )
    _enqueue_on_commit(run.id)
    return run


def _enqueue_on_commit(run_id: Any) -> None:
    transaction.on_commit(lambda: _enqueue(run_id))


def tool_run_send(run_id: str) -> None:
    """Hand a run to the broker for a worker's `tool_run_execute`."""
    app.send_task(TOOL_RUN_EXECUTE, args=[run_id])


def _enqueue(run_id: Any) -> None:
    try:
        tool_run_send(str(run_id))
    except Exception:  # noqa: BLE001 - the broker is down: the row stays pending, visibly
        # The caller still gets its pending run; the sweep hands it to the broker later.
        logger.exception("Could not enqueue tool run %s; the sweep will retry", run_id)


def tool_run_idempotency_key(run: ToolRun) -> str:
    """The same for every attempt of a run, different for every run: its id."""
    return str(run.id)


def tool_run_process(*, run_id: Any) -> ToolRun | None:
    """What the Celery task does: claim, execute under the lease, complete. No-op if the
    run is not pending (claimed by another process, or finished)."""
    worker = worker_name()
    run = tool_run_claim(run_id=run_id, worker=worker)
    if run is None:
        return None
    outcome = async_to_sync(_execute_held)(run, worker)
    if not tool_run_complete(run=run, outcome=outcome):
        logger.warning(
            "Tool run %s attempt %s was not recorded: %s",
            run.id,
            run.attempts,
            outcome.error or "the run is no longer held by this attempt",
        )
    run.refresh_from_db()
    return run


async def _execute_held(run: ToolRun, worker: str) -> ToolOutcome:
    """Run the tool while a thread renews the lease; a lost lease aborts the tool."""
    loop = asyncio.get_running_loop()
    abort = asyncio.Event()
    keeper = LeaseKeeper(
        run_id=run.id,
        attempt=run.attempts,
        worker=worker,
        on_lost=lambda reason: loop.call_soon_threadsafe(abort.set),
    )
    context = ExecutionContext(
        user=run.created_by,
        tool_call=run.tool_call_id,
        abort=abort,
        idempotency_key=tool_run_idempotency_key(run),
        attempt=run.attempts,
    )
    if run.created_by_id is not None:
        context.on_wait = tool_run_waiter(user_id=run.created_by_id, run_id=str(run.id))
    # Renewed once more right before the tool starts: a process that stalled since its
    # claim (long enough for its run to be taken back) must not start the tool at all.
    if not await sync_to_async(lease_renew)(run_id=run.id, attempt=run.attempts, worker=worker):
        return ToolOutcome(
            status=ToolRunStatus.FAILED,
            error=f"Attempt {run.attempts} did not start: the run was taken back first.",
        )
    keeper.start()
    try:
        outcome = await run_tool(run.tool, run.input, context)
    finally:
        keeper.stop()
    if keeper.lost:
        outcome.error = f"Attempt {run.attempts} was stopped: {keeper.lost}."
    return outcome


def tool_run_complete(*, run: ToolRun, outcome: ToolOutcome) -> bool:
    """Write the outcome once: only the attempt that holds the run updates it."""
    return _finish(
        ToolRun.objects.filter(id=run.id, status=ToolRunStatus.RUNNING, attempts=run.attempts),
        run_id=run.id,
        **outcome_fields(outcome),
    )


def _finish(held: QuerySet[ToolRun], *, run_id: Any, **fields: Any) -> bool:
    """The one way a running async run ends: a conditional update, `tool_run_finished`
    in the same transaction, the push to the owner after commit."""
    with transaction.atomic():
        if held.update(**fields, lease_expires_at=None, finished_at=timezone.now()) != 1:
            return False
        tool_run_finished.send(sender=ToolRun, run_id=run_id)
        transaction.on_commit(lambda: tool_run_notify(run_id=run_id))
    return True


def tool_run_notify(*, run_id: Any) -> None:
    """Tell the run observers (tools_app/observers.py) and push the finished run to its
    owner's browsers (websocket /ws/tool-runs/)."""
    run = ToolRun.objects.select_related("tool").get(id=run_id)
    observers_tool_run_finished(run)
    if run.created_by_id is None:
        return
    group_send_sync(
        tool_runs_group(run.created_by_id), {"type": "tool.run", "run": tool_run_data(run)}
    )


# --- recovery -----------------------------------------------------------------------------
def tool_runs_recover() -> dict[str, list[str]]:
    """Runs whose lease expired (their process died): back to pending and to the broker,
    or failed visibly after STUDIO_TOOL_RUN_MAX_ATTEMPTS attempts. Safe to run from every
    worker at once: each move is an UPDATE conditional on the lease still being expired
    and the attempt being the one read."""
    report: dict[str, list[str]] = {"requeued": [], "failed": []}
    limit = settings.STUDIO_TOOL_RUN_MAX_ATTEMPTS
    for run_id, attempts, worker in expired_runs().values_list("id", "attempts", "worker"):
        same = ToolRun.objects.filter(
            lease_expired(), id=run_id, status=ToolRunStatus.RUNNING, attempts=attempts
        )
        if attempts < limit:
            with transaction.atomic():
                if same.update(
                    status=ToolRunStatus.PENDING,
                    worker="",
                    lease_expires_at=None,
                    enqueued_at=timezone.now(),
                ):
                    _enqueue_on_commit(run_id)
                    report["requeued"].append(str(run_id))
        elif _finish(
            same,
            run_id=run_id,
            status=ToolRunStatus.FAILED,
            error=f"The worker running this tool ({worker or 'unknown'}) stopped (crashed "
            f"or was killed) during attempt {attempts}; the run was given up after "
            f"{limit} attempts.",
        ):
            report["failed"].append(str(run_id))
    if report["requeued"] or report["failed"]:
        logger.warning("Tool runs recovered from dead workers: %s", report)
    return report


def tool_runs_sweep(*, now: datetime | None = None) -> dict[str, list[str]]:
    """Recovery, plus: a pending run nobody claimed for UNCLAIMED_SECONDS is handed to the
    broker again (its message was lost), at most once per period whoever sweeps."""
    report = tool_runs_recover()
    cutoff = (now or timezone.now()) - timedelta(seconds=UNCLAIMED_SECONDS)
    unclaimed = ToolRun.objects.annotate(queued=Coalesce("enqueued_at", "created_at")).filter(
        status=ToolRunStatus.PENDING, mode=ExecutionMode.ASYNC, queued__lt=cutoff
    )
    report["reenqueued"] = []
    for run_id, enqueued_at in unclaimed.values_list("id", "enqueued_at"):
        # Conditional on the time read: of several sweeps at once, one hands it over.
        same = ToolRun.objects.filter(id=run_id, status=ToolRunStatus.PENDING)
        same = (
            same.filter(enqueued_at__isnull=True)
            if enqueued_at is None
            else same.filter(enqueued_at=enqueued_at)
        )
        with transaction.atomic():
            if same.update(enqueued_at=timezone.now()):
                _enqueue_on_commit(run_id)
                report["reenqueued"].append(str(run_id))
    return report
