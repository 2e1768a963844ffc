"""Celery tasks of evals: thin wrappers, the logic lives in evals.services.suite_runs."""

from __future__ import annotations

from celery import shared_task
from django.db import InterfaceError, OperationalError

from evals.services.recovery import suite_runs_sweep
from evals.services.suite_runs import SUITE_RUN_TASK, suite_run_execute


# Retried only for a database that is briefly unreachable before the claim; a case's own
# failure is its failed result. The claim makes a second delivery a no-op; a dead worker's
# run is taken back by the sweep once its lease expires.
@shared_task(
    name=SUITE_RUN_TASK,
    acks_late=True,
    autoretry_for=(OperationalError, InterfaceError),
    retry_backoff=True,
    max_retries=3,
)
def suite_run_execute_task(suite_run_id: int) -> None:
    suite_run_execute(suite_run_id=suite_run_id)


@shared_task(name="evals.suite_runs_sweep")
def suite_runs_sweep_task() -> None:
    suite_runs_sweep()
