"""Suite runs: start one (the agent's snapshot and a pending result per case and
attempt), execute it (cases in parallel up to STUDIO_EVAL_CONCURRENCY), and publish its
progress to the channel-layer group `/ws/evals/<id>/` relays."""

from __future__ import annotations

import logging
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from asgiref.sync import async_to_sync
from channels.layers import get_channel_layer
from django.conf import settings
from django.db import connections, transaction
from django.db.models import Q
from django.utils import timezone

from agents_core.models import Agent, Revision
from agents_core.overrides import effective_instructions
from common.exceptions import ApplicationError
from evals.models import CaseResult, ResultStatus, Suite, SuiteRun, SuiteRunStatus
from evals.runner import case_play
from evals.services.leases import SuiteLease, held, suite_run_claim
from studio.celery import app
from tools_app.services.leases import worker_name

log = logging.getLogger(__name__)
MAX_REPEAT = 100
# The Celery task that plays a suite run (registered by evals.tasks).
SUITE_RUN_TASK = "evals.suite_run_execute"


def agent_snapshot(agent: Agent) -> dict[str, Any]:
    """What a suite run records of its agent: enough to tell which change made a case
    pass or fail between two runs."""
    agent.refresh_from_db()
    revision = Revision.objects.filter(agent=agent).order_by("-version").first()
    return {
        "agent": agent.slug,
        "agentVersion": agent.version,
        "revision": revision.version if revision else None,
        "model": agent.model,
        "instructions": effective_instructions(agent),
        "defaultOptions": agent.default_options or {},
        "tools": sorted(agent.tool_bindings.values_list("key", flat=True)),
        "judgeModel": settings.STUDIO_EVAL_JUDGE_MODEL or agent.model,
    }


def suite_run_start(
    *, suite: Suite, user: Any, repeat: int | None = None, enqueue: bool = True
) -> SuiteRun:
    """A queued suite run with a pending result per case and attempt; with `enqueue`, a
    Celery task executes it once this transaction commits."""
    repeat = suite.repeat if repeat is None else repeat
    if not 1 <= repeat <= MAX_REPEAT:
        raise ApplicationError(
            f"repeat must be between 1 and {MAX_REPEAT}.",
            extra={"errors": [{"path": "$.repeat", "message": f"must be 1..{MAX_REPEAT}"}]},
        )
    cases = list(suite.cases.all())
    if not cases:
        raise ApplicationError("The suite has no cases.", code="empty_suite")
    with transaction.atomic():
        suite_run = SuiteRun.objects.create(
            suite=suite, owner=user, repeat=repeat, snapshot=agent_snapshot(suite.agent)
        )
        CaseResult.objects.bulk_create(
            CaseResult(suite_run=suite_run, case=case, attempt=attempt)
            for case in cases
            for attempt in range(1, repeat + 1)
        )
        suite_run.summary = suite_run_summary(suite_run=suite_run)
        suite_run.save(update_fields=["summary"])
        if enqueue:
            # By name, so this module need not import the tasks module that imports it.
            transaction.on_commit(lambda: app.send_task(SUITE_RUN_TASK, args=[suite_run.pk]))
    return suite_run


def suite_run_execute(*, suite_run_id: int) -> SuiteRun | None:
    """Play every pending result of a queued suite run under a lease; None when another
    process claimed it first (the task may be delivered twice)."""
    worker = worker_name()
    attempt = suite_run_claim(suite_run_id=suite_run_id, worker=worker)
    if attempt is None:
        return None
    suite_run = SuiteRun.objects.select_related("suite__agent", "owner").get(pk=suite_run_id)
    progress_publish(suite_run=suite_run)
    key: dict[str, Any] = {"suite_run_id": suite_run_id, "attempt": attempt, "worker": worker}
    pending = list(
        suite_run.results.filter(status=ResultStatus.PENDING).values_list("pk", flat=True)
    )
    workers = max(1, int(settings.STUDIO_EVAL_CONCURRENCY))
    with (
        SuiteLease(**key) as lease,
        ThreadPoolExecutor(max_workers=workers, thread_name_prefix="evals") as pool,
    ):
        list(pool.map(lambda pk: _result_play_in_thread(pk, key, lease), pending))
    if not suite_run_finish(suite_run_id=suite_run_id, held_by=key):
        return None  # taken back meanwhile: the attempt that holds it finishes it
    suite_run.refresh_from_db()
    return suite_run


def suite_run_finish(*, suite_run_id: int, held_by: dict[str, Any] | None = None) -> bool:
    """Record the summary and the verdict (passed when every attempt passed) and publish
    it; with `held_by`, only while that attempt still holds the run."""
    suite_run = SuiteRun.objects.get(pk=suite_run_id)
    summary = suite_run_summary(suite_run=suite_run)
    rows = SuiteRun.objects.filter(held(**held_by) if held_by else Q(pk=suite_run_id))
    if not rows.update(
        status=SuiteRunStatus.PASSED if summary["passed"] else SuiteRunStatus.FAILED,
        summary=summary,
        finished_at=timezone.now(),
        lease_expires_at=None,
    ):
        return False
    progress_publish(suite_run=suite_run)
    return True


def _result_play_in_thread(result_id: int, key: dict[str, Any], lease: SuiteLease) -> None:
    try:
        if not lease.lost.is_set():
            result_play(result_id=result_id, held_by=key)
    finally:
        connections.close_all()  # this pool thread's own connections


def result_play(*, result_id: int, held_by: dict[str, Any] | None = None) -> CaseResult | None:
    """Play one case attempt and record its verdicts; None when it was claimed already
    (or, with `held_by`, when that attempt no longer holds the suite run)."""
    claim = CaseResult.objects.filter(pk=result_id, status=ResultStatus.PENDING)
    if held_by is not None:
        claim = claim.filter(suite_run__in=SuiteRun.objects.filter(held(**held_by)))
    if claim.update(status=ResultStatus.RUNNING) != 1:
        return None
    result = CaseResult.objects.select_related("case__agent", "suite_run__owner").get(pk=result_id)
    suite_run = result.suite_run
    # The agent's version as the case starts: the revision its runs are played against, even
    # when the agent is edited while the suite runs.
    result.agent_version = (
        Agent.objects.filter(pk=result.case.agent_id).values_list("version", flat=True).first()
    )
    try:
        outcome = case_play(
            case=result.case,
            user=suite_run.owner,
            metadata={"suiteRunId": suite_run.pk, "attempt": result.attempt},
        )
    except Exception as exc:  # noqa: BLE001 - one broken case must not stop the suite
        log.exception("Case %s of suite run %s failed to play", result.case_id, suite_run.pk)
        result.status, result.error = ResultStatus.FAILED, f"{type(exc).__name__}: {exc}"
    else:
        result.status = ResultStatus.PASSED if outcome.passed else ResultStatus.FAILED
        result.turns, result.error = outcome.turns, outcome.error
        result.thread, result.duration_ms = outcome.thread, outcome.duration_ms
    result.finished_at = timezone.now()
    result.save()
    SuiteRun.objects.filter(pk=suite_run.pk).update(summary=suite_run_summary(suite_run=suite_run))
    progress_publish(suite_run=suite_run, result=result)
    return result


def suite_run_summary(*, suite_run: SuiteRun) -> dict[str, Any]:
    """Counts, and per case its pass rate over its attempts; flaky: some attempts passed
    and some failed. The suite passes when every attempt of every case passed."""
    rows = suite_run.results.values("case_id", "case__name", "status").order_by("case__name")
    cases: dict[int, dict[str, Any]] = {}
    done = passed_attempts = 0
    for row in rows:
        entry = cases.setdefault(
            row["case_id"],
            {
                "case": row["case_id"],
                "name": row["case__name"],
                "attempts": 0,
                "passed": 0,
                "done": 0,
            },
        )
        entry["attempts"] += 1
        if row["status"] in (ResultStatus.PASSED, ResultStatus.FAILED):
            entry["done"] += 1
            done += 1
        if row["status"] == ResultStatus.PASSED:
            entry["passed"] += 1
            passed_attempts += 1
    for entry in cases.values():
        entry["passRate"] = entry["passed"] / entry["attempts"] if entry["attempts"] else 0.0
        entry["flaky"] = 0 < entry["passed"] < entry["done"]
        entry["status"] = (
            "pending"
            if entry["done"] < entry["attempts"]
            else ("passed" if entry["passed"] == entry["attempts"] else "failed")
        )
    total = sum(entry["attempts"] for entry in cases.values())
    return {
        "total": total,
        "done": done,
        "passedAttempts": passed_attempts,
        "casesPassed": sum(1 for e in cases.values() if e["status"] == "passed"),
        "casesFailed": sum(1 for e in cases.values() if e["status"] == "failed"),
        "flaky": sum(1 for e in cases.values() if e["flaky"]),
        "passed": done == total and passed_attempts == total,
        "cases": list(cases.values()),
    }


def suite_run_group(suite_run_id: int) -> str:
    return f"evals-run-{suite_run_id}"


def progress_publish(*, suite_run: SuiteRun, result: CaseResult | None = None) -> None:
    """Send the run's progress (and the result that changed) to its subscribers. A layer
    that is down loses the event, not the run: the page reads the state on connect."""
    from evals.selectors import jsonable, result_info, suite_run_info

    layer = get_channel_layer()
    if layer is None:
        return
    suite_run.refresh_from_db()
    event = {
        "type": "evals.progress",
        "run": suite_run_info(suite_run),
        "result": result_info(result) if result is not None else None,
    }
    try:
        async_to_sync(layer.group_send)(suite_run_group(suite_run.pk), jsonable(event))
    except Exception:  # noqa: BLE001 - a missed progress event must not fail a suite
        log.warning("evals progress for suite run %s not sent", suite_run.pk, exc_info=True)
