"""Suite runs survive a dead worker: a suite run whose lease expired (its process died,
evals/services/leases.py) is put back in the queue, or ended after
STUDIO_EVAL_MAX_ATTEMPTS attempts with its unfinished results failed and the reason.

Every Celery worker sweeps at start-up and every STUDIO_TOOL_RUN_RECOVER_SECONDS (the
recovery thread of tools_app/recovery.py, which evals registers this sweep with), beat's
`evals.suite_runs_sweep` every minute, and `manage.py agent test-sweep` on demand. Each
move is an UPDATE conditional on the lease still being expired and the attempt being the
one read, so sweeping from many processes at once is safe. Finished results are kept; an
orphaned running result's half-finished agent run is ended as interrupted through
agents_core's run services, and the result plays again.
"""

from __future__ import annotations

import logging
from functools import partial

from django.conf import settings
from django.db import transaction
from django.utils import timezone

from agents_core.models import Run, RunStatus
from agents_core.services.runs import run_end_interrupted, run_supersede
from evals.models import CaseResult, ResultStatus, SuiteRun, SuiteRunStatus
from evals.services.leases import lease_expired
from evals.services.suite_runs import SUITE_RUN_TASK, suite_run_finish
from studio.celery import app

log = logging.getLogger(__name__)
ORPHANED = "The worker playing this test case stopped; the case is played again."


def _orphans_end(*, suite_run_id: int, result_ids: list[int]) -> None:
    """End the agent runs a dead process left open on the threads of these results: a
    running one as interrupted, one suspended on a scripted answer as superseded."""
    for result in CaseResult.objects.filter(pk__in=result_ids):
        runs = Run.objects.active().filter(
            thread__metadata__suiteRunId=suite_run_id,
            thread__metadata__evalCaseId=result.case_id,
            thread__metadata__attempt=result.attempt,
        )
        for run in runs:
            if run.status == RunStatus.RUNNING:
                run_end_interrupted(run=run)
            else:
                run_supersede(run, error=ORPHANED, finish_reason="interrupted")


def suite_runs_sweep() -> dict[str, list[int]]:
    """Suite runs whose lease expired (their process died): back to the queue with their
    orphaned results pending again, or, after STUDIO_EVAL_MAX_ATTEMPTS attempts, ended
    with every unfinished result failed and the reason on it."""
    report: dict[str, list[int]] = {"requeued": [], "failed": []}
    limit = settings.STUDIO_EVAL_MAX_ATTEMPTS
    expired = SuiteRun.objects.filter(lease_expired(), status=SuiteRunStatus.RUNNING)
    for pk, attempt, worker in expired.values_list("pk", "attempts", "worker"):
        same = SuiteRun.objects.filter(
            lease_expired(), pk=pk, status=SuiteRunStatus.RUNNING, attempts=attempt
        )
        unfinished = CaseResult.objects.filter(
            suite_run_id=pk, status__in=(ResultStatus.PENDING, ResultStatus.RUNNING)
        )
        with transaction.atomic():
            if attempt < limit:
                if not same.update(status=SuiteRunStatus.QUEUED, worker="", lease_expires_at=None):
                    continue
                orphans = list(
                    unfinished.filter(status=ResultStatus.RUNNING).values_list("pk", flat=True)
                )
                _orphans_end(suite_run_id=pk, result_ids=orphans)
                unfinished.update(status=ResultStatus.PENDING)
                transaction.on_commit(partial(app.send_task, SUITE_RUN_TASK, args=[pk]))
                report["requeued"].append(pk)
                continue
            if not same.update(
                status=SuiteRunStatus.FAILED, lease_expires_at=None, finished_at=timezone.now()
            ):
                continue
            _orphans_end(suite_run_id=pk, result_ids=list(unfinished.values_list("pk", flat=True)))
            unfinished.update(
                status=ResultStatus.FAILED,
                finished_at=timezone.now(),
                error=f"The worker playing this suite run ({worker or 'unknown'}) stopped "
                f"(crashed or was killed) during attempt {attempt}; the suite run was given "
                f"up after {limit} attempts.",
            )
            report["failed"].append(pk)
        suite_run_finish(suite_run_id=pk)
    if report["requeued"] or report["failed"]:
        log.warning("Suite runs recovered from dead workers: %s", report)
    return report
