"""A suite run's summary (pass rate, flaky, passed) and the pages' ownership: signed out
goes to the login page, another user's run is a 404."""

from __future__ import annotations

import pytest
from django.test import Client

from evals.models import CaseResult, Suite, SuiteRun, TestCase
from tests.agents_core.factories import AgentFactory

pytestmark = pytest.mark.django_db

SPEC = {"turns": [{"message": "hi"}]}


@pytest.fixture
def suite_run(owner):
    agent = AgentFactory(owner=owner)
    steady = TestCase.objects.create(agent=agent, owner=owner, name="steady", spec=SPEC)
    shaky = TestCase.objects.create(agent=agent, owner=owner, name="shaky", spec=SPEC)
    suite = Suite.objects.create(agent=agent, owner=owner, slug="s", name="S")
    run = SuiteRun.objects.create(
        suite=suite, owner=owner, repeat=3, snapshot={"agent": agent.slug}
    )
    for case, statuses in ((steady, ["passed"] * 3), (shaky, ["passed", "failed", "pending"])):
        for attempt, status in enumerate(statuses, 1):
            CaseResult.objects.create(suite_run=run, case=case, attempt=attempt, status=status)
    return run


def test_the_summary_gives_pass_rates_and_marks_flaky_cases(suite_run):
    from evals.services.suite_runs import suite_run_summary

    summary = suite_run_summary(suite_run=suite_run)
    cases = {c["name"]: c for c in summary["cases"]}
    assert cases["steady"]["passRate"] == 1.0 and cases["steady"]["status"] == "passed"
    assert cases["shaky"]["flaky"] and cases["shaky"]["status"] == "pending"
    assert (summary["total"], summary["done"], summary["passed"]) == (6, 5, False)
    CaseResult.objects.filter(status="pending").update(status="passed")
    summary = suite_run_summary(suite_run=suite_run)
    shaky = next(c for c in summary["cases"] if c["name"] == "shaky")
    assert shaky["passRate"] == pytest.approx(2 / 3) and shaky["status"] == "failed"
    assert summary["flaky"] == 1 and summary["casesFailed"] == 1 and not summary["passed"]


def test_the_pages_are_the_owners_only(suite_run, owner, outsider):
    anonymous = Client()
    for url in (
        "/tests/",
        f"/tests/runs/{suite_run.pk}/",
        f"/tests/compare/?a={suite_run.pk}&b={suite_run.pk}",
    ):
        assert anonymous.get(url).status_code == 302, url
    theirs = Client()
    theirs.force_login(outsider)
    assert theirs.get(f"/tests/runs/{suite_run.pk}/").status_code == 404
    assert theirs.get(f"/tests/compare/?a={suite_run.pk}&b={suite_run.pk}").status_code == 404
    assert b"No suites yet" in theirs.get("/tests/").content
    mine = Client()
    mine.force_login(owner)
    assert mine.get(f"/tests/runs/{suite_run.pk}/").status_code == 200
    assert mine.get("/tests/compare/?a=x&b=1").status_code == 404
