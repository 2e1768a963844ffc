"""Celery tasks of tools_app: thin wrappers, the logic lives in tools_app.services.runs."""

from __future__ import annotations

from celery import shared_task
from django.db import InterfaceError, OperationalError

from tools_app.services import runs


# Retried only for a database that is briefly unreachable; a tool's own failure is a
# recorded failed run, and a dead worker's run is taken back by the lease recovery
# (tools_app/recovery.py), so the message is acked late but need not be redelivered.
@shared_task(
    name=runs.TOOL_RUN_EXECUTE,
    bind=True,
    acks_late=True,
    reject_on_worker_lost=True,
    autoretry_for=(OperationalError, InterfaceError),
    retry_backoff=True,
    max_retries=3,
)
def tool_run_execute(self, tool_run_id: str) -> None:  # noqa: ANN001
    runs.tool_run_process(run_id=tool_run_id)


# Beat runs it every minute as a safety net; every worker runs the same recovery itself.
@shared_task(name="tools_app.tool_runs_sweep")
def tool_runs_sweep() -> None:
    runs.tool_runs_sweep()
