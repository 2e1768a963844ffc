"""Suite runs survive a dead worker: the sweep's moves on its own, and a real Celery
worker killed with SIGKILL mid-suite while another one takes the run back (no beat)."""

from __future__ import annotations

import os
import signal
import time
from datetime import timedelta

import pytest
from django.db.models.functions import Now
from django.utils import timezone

from agents_core.models import Run
from evals.models import CaseResult, SuiteRun
from evals.services.recovery import suite_runs_sweep
from evals.services.suite_runs import suite_run_start
from tests.conftest import celery_worker_process
from tests.evals.conftest import wait_finished

pytestmark = pytest.mark.django_db(transaction=True)
BOUND = 120.0  # seconds: a bound on the waits, not a timed assertion


def _held_by_a_dead_worker(suite_run: SuiteRun, *, attempts: int, expired: bool = True) -> None:
    """The suite run as a worker that died left it: running, two results finished, one
    running, the rest pending."""
    ends = timezone.now() + timedelta(seconds=-5 if expired else 60)
    SuiteRun.objects.filter(pk=suite_run.pk).update(
        status="running", attempts=attempts, worker="gone:1", lease_expires_at=ends
    )
    results = list(suite_run.results.order_by("pk"))
    for result in results[:2]:
        result.status, result.error = "passed", "kept"
        result.finished_at = timezone.now()
        result.save()
    CaseResult.objects.filter(pk=results[2].pk).update(status="running")


def test_the_sweep_requeues_an_expired_run_and_keeps_its_finished_results(demo, owner):
    suite_run = suite_run_start(suite=demo, user=owner, enqueue=False)
    _held_by_a_dead_worker(suite_run, attempts=1)

    assert suite_runs_sweep() == {"requeued": [suite_run.pk], "failed": []}
    assert suite_runs_sweep() == {"requeued": [], "failed": []}  # moved once

    suite_run.refresh_from_db()
    assert (suite_run.status, suite_run.worker, suite_run.attempts) == ("queued", "", 1)
    statuses = list(suite_run.results.order_by("pk").values_list("status", "error"))
    assert statuses[:2] == [("passed", "kept")] * 2
    assert {status for status, _ in statuses[2:]} == {"pending"}


def test_the_sweep_ends_the_agent_run_an_orphaned_case_left_open(demo, owner):
    from agents_core.services.threads import thread_create

    suite_run = suite_run_start(suite=demo, user=owner, enqueue=False)
    _held_by_a_dead_worker(suite_run, attempts=1)
    runs = {}
    for result in suite_run.results.order_by("pk")[:3]:  # two finished, one orphaned
        metadata = {"suiteRunId": suite_run.pk, "attempt": result.attempt}
        thread = thread_create(
            user=owner, agent=demo.agent, metadata={"evalCaseId": result.case_id, **metadata}
        )
        # What the dead process left: a run still marked running on the case's thread.
        runs[result.status] = Run.objects.create(
            thread=thread, agent=demo.agent, status="running", started_by=owner
        )

    suite_runs_sweep()

    orphaned, kept = runs["running"], runs["passed"]
    orphaned.refresh_from_db()
    kept.refresh_from_db()
    assert orphaned.status == "failed" and orphaned.finished_at is not None
    assert kept.status == "running"  # a finished result's thread is not the sweep's


def test_the_sweep_leaves_a_live_lease_alone(demo, owner):
    suite_run = suite_run_start(suite=demo, user=owner, enqueue=False)
    _held_by_a_dead_worker(suite_run, attempts=1, expired=False)

    assert suite_runs_sweep() == {"requeued": [], "failed": []}
    suite_run.refresh_from_db()
    assert (suite_run.status, suite_run.worker) == ("running", "gone:1")
    assert suite_run.results.filter(status="running").count() == 1


def test_after_the_last_attempt_the_unfinished_results_fail_with_the_reason(demo, owner, settings):
    settings.STUDIO_EVAL_MAX_ATTEMPTS = 2
    suite_run = suite_run_start(suite=demo, user=owner, enqueue=False)
    _held_by_a_dead_worker(suite_run, attempts=2)

    assert suite_runs_sweep() == {"requeued": [], "failed": [suite_run.pk]}

    suite_run.refresh_from_db()
    assert suite_run.status == "failed" and suite_run.finished_at is not None
    assert suite_run.summary["done"] == suite_run.summary["total"] == 7
    kept, given_up = suite_run.results.order_by("pk")[:2], suite_run.results.order_by("pk")[2:]
    assert [r.status for r in kept] == ["passed", "passed"]
    for result in given_up:
        assert result.status == "failed" and result.finished_at is not None
        assert "(gone:1) stopped" in result.error and "after 2 attempts" in result.error


def test_the_cli_sweeps(demo, owner):
    from io import StringIO

    from django.core.management import call_command

    suite_run = suite_run_start(suite=demo, user=owner, enqueue=False)
    _held_by_a_dead_worker(suite_run, attempts=1)
    out = StringIO()
    call_command("agent", "test-sweep", stdout=out)
    assert out.getvalue().strip() == "Requeued 1 suite run(s), failed 0."
    assert SuiteRun.objects.get(pk=suite_run.pk).status == "queued"


def _wait(predicate, within: float = BOUND):
    deadline = time.monotonic() + within
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(0.1)
    raise TimeoutError("condition not met within the bound")


@pytest.mark.celery_worker
def test_a_killed_workers_suite_run_is_finished_by_another_worker(demo, owner):
    env = {
        "STUDIO_EVAL_CONCURRENCY": "1",
        "STUDIO_OFFLINE_DELAY": "0.05",
        "STUDIO_EVAL_LEASE_SECONDS": "3",
        "STUDIO_TOOL_RUN_RECOVER_SECONDS": "1",
    }
    with celery_worker_process(**env) as first, celery_worker_process(**env) as second:
        workers = {first.pid: first, second.pid: second}
        suite_run = suite_run_start(suite=demo, user=owner)

        _wait(
            lambda: (
                suite_run.results.filter(status__in=("passed", "failed")).exists()
                and suite_run.results.filter(status="running").exists()
            )
        )
        suite_run.refresh_from_db()
        victim = workers.pop(int(suite_run.worker.rsplit(":", 1)[1]))
        os.kill(victim.pid, signal.SIGKILL)
        victim.wait()
        finished = dict(
            suite_run.results.filter(status__in=("passed", "failed")).values_list(
                "pk", "finished_at"
            )
        )
        orphans = list(suite_run.results.filter(status="running").values_list("pk", flat=True))
        wait_finished(suite_run, seconds=BOUND)
        [survivor] = workers

    assert suite_run.attempts == 2 and suite_run.worker.endswith(f":{survivor}")
    # The demo's verdicts, as without the kill: three cases pass, four are built to fail.
    assert (suite_run.summary["casesPassed"], suite_run.summary["casesFailed"]) == (3, 4)
    results = {r.pk: r for r in suite_run.results.all()}
    assert finished and orphans
    for pk, finished_at in finished.items():
        assert results[pk].finished_at == finished_at  # kept, not played again
    for pk in orphans:
        assert results[pk].finished_at is not None and "stopped" not in results[pk].error
    # The orphan's half-finished agent run was ended, none is left running.
    runs = Run.objects.filter(thread__metadata__suiteRunId=suite_run.pk)
    assert not runs.filter(status__in=("running", "suspended")).exists()


@pytest.mark.celery_worker
def test_no_result_is_played_twice_while_its_worker_lives(demo, owner):
    """The suite plays for several leases while another worker sweeps every second and a
    duplicate of the task message is delivered: the renewals keep the run its own."""
    from evals.tasks import suite_run_execute_task

    env = {
        "STUDIO_EVAL_CONCURRENCY": "1",
        "STUDIO_OFFLINE_DELAY": "0.05",
        "STUDIO_EVAL_LEASE_SECONDS": "2",
        "STUDIO_TOOL_RUN_RECOVER_SECONDS": "1",
    }
    with celery_worker_process(**env), celery_worker_process(**env):
        suite_run = suite_run_start(suite=demo, user=owner)
        _wait(lambda: SuiteRun.objects.get(pk=suite_run.pk).status == "running")
        suite_run_execute_task.delay(suite_run.pk)  # a second delivery
        # Seen still running more than two leases after its claim: the sweeps had chances.
        _wait(
            lambda: SuiteRun.objects.filter(
                pk=suite_run.pk,
                status="running",
                started_at__lt=Now() - timedelta(seconds=5),
            ).exists()
        )
        wait_finished(suite_run, seconds=BOUND)

    assert suite_run.attempts == 1
    assert (suite_run.summary["casesPassed"], suite_run.summary["casesFailed"]) == (3, 4)
    # Seven cases, one of them two turns: eight agent runs, none played again.
    assert Run.objects.filter(thread__metadata__suiteRunId=suite_run.pk).count() == 8
