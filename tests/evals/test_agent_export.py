"""An exported agent carries the exporting user's test cases and suites (section
`tests`); importing it creates them for the importing user under the imported agent,
all or nothing, with errors at their JSON path in the document."""

from __future__ import annotations

import copy

import pytest

from agents_core.models import Agent
from evals.models import Suite, TestCase
from evals.services.cases import case_create, suite_create
from tests.agents_core.factories import AgentFactory
from tests.studio.db_state import db_fingerprint

pytestmark = pytest.mark.django_db

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


@pytest.fixture
def exported(api, owner):
    agent = AgentFactory(slug="trip", name="Trip", owner=owner)
    case = case_create(agent=agent, owner=owner, name="paris", spec=SPEC)
    suite_create(agent=agent, owner=owner, name="Smoke", slug="smoke", cases=[case.pk])
    response = api.get("/api/agents/trip/export")
    assert response.status_code == 200, response.content
    return response.json()


def test_the_export_holds_the_cases_and_suites(exported):
    tests = exported["tests"]
    assert tests["cases"] == [{"name": "paris", "description": "", "spec": SPEC}]
    assert tests["suites"] == [{"slug": "smoke", "name": "Smoke", "repeat": 1, "cases": ["paris"]}]


def test_an_agent_without_cases_exports_no_section(api, owner):
    AgentFactory(slug="bare", owner=owner)
    assert "tests" not in api.get("/api/agents/bare/export").json()


def test_importing_under_a_new_name_brings_the_tests_along(api, owner, exported):
    body = {"document": exported, "renames": {"agents": {"trip": "trip-copy"}}}
    response = api.post("/api/agents/import", body, format="json")
    assert response.status_code == 201, response.content
    copy_agent = Agent.objects.get(slug="trip-copy")
    assert TestCase.objects.get(agent=copy_agent, owner=owner).spec == SPEC
    # The slug "smoke" is the original agent's suite: the copy's gets a free one.
    suite = Suite.objects.get(agent=copy_agent)
    assert suite.slug == "smoke-2" and [c.name for c in suite.cases.all()] == ["paris"]


def test_another_user_imports_them_as_their_own(outsider_api, outsider, exported):
    # Slugs are per owner: the outsider's copy keeps the slug "trip", as their own.
    response = outsider_api.post("/api/agents/import", {"document": exported}, format="json")
    assert response.status_code == 201, response.content
    case = TestCase.objects.get(owner=outsider)
    assert (case.agent.slug, case.agent.owner) == ("trip", outsider)
    assert Suite.objects.get(owner=outsider).slug == "smoke"


def test_a_bad_case_in_the_document_is_a_400_at_its_path_and_writes_nothing(api, exported):
    document = copy.deepcopy(exported)
    document["tests"]["cases"][0]["spec"]["turns"][0]["expect"][0]["type"] = "nope"
    before = db_fingerprint()
    body = {"document": document, "renames": {"agents": {"trip": "trip-2"}}}
    response = api.post("/api/agents/import", body, format="json")
    assert response.status_code == 400, response.content
    assert response.json()["errors"][0]["path"] == (
        "$.document.tests.cases[0].spec.turns[0].expect[0].type"
    )
    assert db_fingerprint() == before
