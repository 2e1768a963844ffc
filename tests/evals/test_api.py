"""The REST API of agent tests: cases under an agent, suites, runs and results; bad
specs answered with JSON paths; everything owner-only (404 for others)."""

from __future__ import annotations

import json

import pytest

from evals.models import Suite, SuiteRun, TestCase
from evals.services.suite_runs import suite_run_execute
from tests.evals.conftest import DEMO

pytestmark = pytest.mark.django_db(transaction=True)

SPEC = {
    "turns": [
        {
            "message": "use weather_lookup for Paris",
            "expect": [
                {"type": "tool_called", "tool": "weather_lookup", "args": {"city": "Paris"}}
            ],
        }
    ]
}


def test_case_crud_under_an_agent(api, synced):
    created = api.post(
        "/api/agents/travel-desk/tests/", {"name": "paris", "spec": SPEC}, format="json"
    )
    assert created.status_code == 201, created.content
    case_id = created.json()["id"]
    assert api.get("/api/agents/travel-desk/tests/").json()[0]["name"] == "paris"
    patched = api.patch(
        f"/api/agents/travel-desk/tests/{case_id}/", {"description": "d"}, format="json"
    )
    assert patched.status_code == 200 and patched.json()["spec"] == SPEC
    twice = api.post(
        "/api/agents/travel-desk/tests/", {"name": "paris", "spec": SPEC}, format="json"
    )
    assert twice.status_code == 409 and twice.json()["errors"][0]["path"] == "$.name"
    assert api.delete(f"/api/agents/travel-desk/tests/{case_id}/").status_code == 204
    assert not TestCase.objects.exists()


def test_a_bad_spec_is_a_400_with_the_json_path(api, synced):
    spec = {"turns": [{"message": "hi", "expect": [{"type": "answer_regex", "pattern": "(("}]}]}
    response = api.post(
        "/api/agents/travel-desk/tests/", {"name": "x", "spec": spec}, format="json"
    )
    assert response.status_code == 400
    assert response.json()["errors"][0]["path"] == "$.spec.turns[0].expect[0].pattern"
    wrong = {"turns": [{"message": "hi", "expect": [{"type": "tool_called", "tool": 3}]}]}
    response = api.post(
        "/api/agents/travel-desk/tests/", {"name": "x", "spec": wrong}, format="json"
    )
    assert response.json()["errors"][0]["path"] == "$.spec.turns[0].expect[0].tool"
    assert not TestCase.objects.exists()


def test_suites_runs_and_results(api, owner, synced):
    api.post("/api/agents/travel-desk/tests/import", json.loads(DEMO.read_text()), format="json")
    ids = list(TestCase.objects.filter(name__startswith="weather").values_list("pk", flat=True))
    created = api.post(
        "/api/suites/", {"agent": "travel-desk", "name": "Paris only", "cases": ids}, format="json"
    )
    assert created.status_code == 201 and created.json()["slug"] == "paris-only"
    bad = api.post(
        "/api/suites/", {"agent": "travel-desk", "name": "x", "cases": [999999]}, format="json"
    )
    assert bad.status_code == 400 and bad.json()["errors"][0]["path"] == "$.cases[0]"

    started = api.post("/api/suites/paris-only/runs/", {"repeat": 2}, format="json")
    assert started.status_code == 202, started.content
    run_id = started.json()["id"]
    assert started.json()["summary"]["total"] == 2
    # The test process plays it (the Celery wiring is tests/evals/test_celery_suite.py).
    suite_run_execute(suite_run_id=run_id)
    detail = api.get(f"/api/suite-runs/{run_id}/").json()
    assert detail["status"] == "passed" and len(detail["results"]) == 2
    result = detail["results"][0]
    assert result["chatUrl"] == f"/chat/t/{result['threadId']}/"
    assert result["turns"][0]["verdicts"][0]["passed"] is True
    assert api.get("/api/suites/paris-only/runs/").json()[0]["id"] == run_id
    exported = api.get("/api/agents/travel-desk/tests/export").json()
    assert len(exported["cases"]) == 7


def test_everything_is_owner_only(api, outsider_api, owner, synced):
    api.post("/api/agents/travel-desk/tests/import", json.loads(DEMO.read_text()), format="json")
    case = TestCase.objects.first()
    suite = Suite.objects.get()
    run = SuiteRun.objects.create(suite=suite, owner=owner)
    for url in (
        f"/api/agents/travel-desk/tests/{case.pk}/",
        f"/api/suites/{suite.slug}/",
        f"/api/suites/{suite.slug}/runs/",
        f"/api/suite-runs/{run.pk}/",
    ):
        assert outsider_api.get(url).status_code == 404, url
    assert outsider_api.get("/api/agents/travel-desk/tests/").json() == []
    assert (
        outsider_api.post(f"/api/suites/{suite.slug}/runs/", {}, format="json").status_code == 404
    )
    assert outsider_api.delete(f"/api/agents/travel-desk/tests/{case.pk}/").status_code == 404
    assert TestCase.objects.filter(pk=case.pk).exists()
    assert api.get("/api/suites/").json()[0]["slug"] == suite.slug
    assert outsider_api.get("/api/suites/").json() == []
