"""The demo suite through a real Celery worker: the cases built to pass pass, the cases
built to fail fail with the reason the issue asks for, each result linked to its thread."""

from __future__ import annotations

import pytest

from agents_core.models import Run
from evals.models import CaseResult
from evals.services.suite_runs import suite_run_execute, suite_run_start
from tests.evals.conftest import wait_finished

pytestmark = pytest.mark.django_db(transaction=True)


def _failed_verdicts(result: CaseResult) -> list[dict]:
    return [v for turn in result.turns for v in turn["verdicts"] if not v["passed"]]


def test_the_demo_suite_runs_in_a_celery_worker(demo, owner, celery_worker):
    suite_run = wait_finished(suite_run_start(suite=demo, user=owner))
    results = {r.case.name: r for r in suite_run.results.select_related("case")}

    assert suite_run.status == "failed"
    assert suite_run.summary["casesPassed"] == 3 and suite_run.summary["casesFailed"] == 4
    for name in ("weather in Paris", "asks for the city", "two turns in order"):
        assert results[name].status == "passed", (name, results[name].turns, results[name].error)

    (wrong,) = _failed_verdicts(results["built to fail: wrong tool argument"])
    assert (wrong["path"], wrong["expected"], wrong["actual"]) == ("$.city", "London", "Paris")
    (missing,) = _failed_verdicts(results["built to fail: missing tool call"])
    assert missing["reason"].startswith("unit_convert was not called")
    (regex,) = _failed_verdicts(results["built to fail: regex miss"])
    assert regex["type"] == "answer_regex"
    (judge,) = _failed_verdicts(results["built to fail: judge below threshold"])
    assert judge["actual"] == pytest.approx(1 / 3, abs=1e-3) and judge["expected"] == 0.8
    assert "umbrella" in judge["reason"]

    asked = results["asks for the city"]
    run = Run.objects.get(pk=asked.turns[0]["runId"])
    call = run.tool_calls.get(tool_name="ask_user")
    assert call.resume_payload == {"answer": "London"} and run.thread_id == asked.thread_id
    assert asked.thread.owner == owner
    two = results["two turns in order"]
    assert len({turn["runId"] for turn in two.turns}) == 2
    assert suite_run.snapshot["agent"] == "travel-desk"
    assert suite_run.snapshot["model"] == "studio/scripted"


def test_executing_a_suite_run_twice_plays_each_case_once(demo, owner, settings):
    suite_run = suite_run_start(suite=demo, user=owner, enqueue=False)
    first = suite_run_execute(suite_run_id=suite_run.pk)
    assert first is not None and first.summary["done"] == 7
    assert suite_run_execute(suite_run_id=suite_run.pk) is None
    assert Run.objects.filter(thread__metadata__suiteRunId=suite_run.pk).count() == 8
