"""/api/agents/ and /api/agents/<slug>/: CRUD, validation, ownership."""

from __future__ import annotations

import pytest
from django.conf import settings

from agents_core.models import Agent, Thread
from tests.agents_core.factories import AgentFactory, AgentToolFactory, SubAgentFactory

pytestmark = pytest.mark.django_db


def payload(**overrides):
    body = {
        "slug": "trip-planner",
        "name": "Trip planner",
        "description": "Plans trips.",
        "model": "openai/gpt-4o-mini",
        "instructions": ["You plan trips.", "Ask before booking."],
        "metadata": {"team": "travel"},
        "default_options": {"maxSteps": 4, "toolChoice": "auto"},
    }
    body.update(overrides)
    return body


# --- create and read ------------------------------------------------------------------------
def test_it_creates_an_agent_owned_by_the_caller(api, owner):
    response = api.post("/api/agents/", payload(), format="json")

    assert response.status_code == 201, response.json()
    body = response.json()
    assert body["slug"] == "trip-planner"
    assert body["owner"] == "owner"
    assert body["source"] == "studio"
    assert body["version"] == 1
    assert body["tools"] == [] and body["subagents"] == []
    agent = Agent.objects.get(slug="trip-planner")
    assert agent.owner == owner
    assert agent.instructions == ["You plan trips.", "Ask before booking."]


def test_the_model_defaults_to_the_studios_default_model(api):
    body = payload()
    del body["model"]

    response = api.post("/api/agents/", body, format="json")

    assert response.status_code == 201
    assert response.json()["model"] == settings.STUDIO_DEFAULT_MODEL


@pytest.mark.parametrize(
    "instructions",
    [
        "Be brief.",
        ["Be brief.", "Be kind."],
        {"role": "system", "content": "Be brief.", "providerOptions": {"anthropic": {}}},
        [{"role": "system", "content": "Be brief."}, {"content": "Be kind."}],
    ],
)
def test_all_four_forms_of_instructions_are_accepted(api, instructions):
    response = api.post("/api/agents/", payload(instructions=instructions), format="json")

    assert response.status_code == 201, response.json()
    assert Agent.objects.get(slug="trip-planner").instructions == instructions


def test_it_lists_own_and_code_agents_but_not_other_users_agents(api, owner, outsider):
    AgentFactory(slug="mine", owner=owner)
    AgentFactory(slug="shared", code=True)
    AgentFactory(slug="theirs", owner=outsider)

    response = api.get("/api/agents/")

    assert response.status_code == 200
    slugs = {agent["slug"] for agent in response.json()["results"]}
    assert {"mine", "shared"} <= slugs
    assert "theirs" not in slugs


def test_the_list_filters_by_source(api, owner):
    AgentFactory(slug="mine", owner=owner)
    AgentFactory(slug="shared", code=True)

    response = api.get("/api/agents/?source=studio")

    assert [agent["slug"] for agent in response.json()["results"]] == ["mine"]


def test_a_gone_code_agent_is_not_listed(api):
    from django.utils import timezone

    AgentFactory(slug="removed-from-code", code=True, gone_at=timezone.now())

    slugs = {agent["slug"] for agent in api.get("/api/agents/").json()["results"]}

    assert "removed-from-code" not in slugs
    assert api.get("/api/agents/removed-from-code/").status_code == 404


def test_it_reads_an_agent_with_its_bindings(api, owner):
    agent = AgentFactory(slug="mine", owner=owner)
    AgentToolFactory(agent=agent, key="lookup", tool__name="lookup_tool", tool__owner=owner)
    SubAgentFactory(parent=agent, key="helper", child=AgentFactory(slug="helper", owner=owner))

    response = api.get("/api/agents/mine/")

    assert response.status_code == 200
    body = response.json()
    assert [(t["key"], t["tool"]) for t in body["tools"]] == [("lookup", "lookup_tool")]
    assert [(s["key"], s["tool_name"], s["agent"]) for s in body["subagents"]] == [
        ("helper", "agent-helper", "helper")
    ]


def test_token_auth_works(token_client):
    assert token_client.post("/api/agents/", payload(), format="json").status_code == 201
    assert token_client.get("/api/agents/trip-planner/").status_code == 200


# --- update and delete ----------------------------------------------------------------------
def test_put_replaces_the_agent_and_bumps_its_version(api, owner):
    AgentFactory(slug="trip-planner", owner=owner, metadata={"old": True})

    response = api.put(
        "/api/agents/trip-planner/", payload(name="Renamed", metadata={}), format="json"
    )

    assert response.status_code == 200, response.json()
    agent = Agent.objects.get(slug="trip-planner")
    assert (agent.name, agent.metadata, agent.version) == ("Renamed", {}, 2)


def test_put_may_leave_out_the_slug_the_url_already_names(api, owner):
    AgentFactory(slug="trip-planner", owner=owner)
    body = payload(name="Renamed")
    del body["slug"]

    response = api.put("/api/agents/trip-planner/", body, format="json")

    assert response.status_code == 200, response.json()
    assert Agent.objects.get(slug="trip-planner").name == "Renamed"


def test_patch_changes_only_the_given_fields(api, owner):
    AgentFactory(slug="mine", owner=owner, name="Mine", model="anthropic/claude-3-5-haiku")

    response = api.patch("/api/agents/mine/", {"instructions": "Shorter."}, format="json")

    assert response.status_code == 200, response.json()
    agent = Agent.objects.get(slug="mine")
    assert (agent.name, agent.model, agent.instructions) == (
        "Mine",
        "anthropic/claude-3-5-haiku",
        "Shorter.",
    )


def test_the_slug_cannot_change(api, owner):
    AgentFactory(slug="mine", owner=owner)

    response = api.patch("/api/agents/mine/", {"slug": "yours"}, format="json")

    assert response.status_code == 400
    assert "cannot change" in response.json()["slug"][0]
    assert Agent.objects.filter(slug="mine").exists()


def test_delete_removes_the_agent_with_its_threads(api, owner):
    agent = AgentFactory(slug="mine", owner=owner)
    Thread.objects.create(agent=agent, owner=owner, resource_id=str(owner.pk))

    response = api.delete("/api/agents/mine/")

    assert response.status_code == 204
    assert not Agent.objects.filter(slug="mine").exists()
    assert not Thread.objects.filter(agent_id=agent.pk).exists()


# --- code agents are read-only --------------------------------------------------------------
def test_a_code_agent_is_readable_by_everyone(outsider_api):
    AgentFactory(slug="shared", code=True)

    response = outsider_api.get("/api/agents/shared/")

    assert response.status_code == 200
    assert response.json()["source"] == "code"
    assert response.json()["owner"] is None


@pytest.mark.parametrize("method", ["put", "patch", "delete"])
def test_a_code_agent_cannot_be_changed_through_the_api(api, method):
    AgentFactory(slug="shared", code=True, name="From code")

    response = getattr(api, method)("/api/agents/shared/", payload(slug="shared"), format="json")

    assert response.status_code == 403
    assert response.json()["detail"] == (
        "Agent 'shared' is defined in code; edit its overrides instead."
    )
    agent = Agent.objects.get(slug="shared")
    assert (agent.name, agent.version) == ("From code", 1)


# --- ownership ------------------------------------------------------------------------------
@pytest.mark.parametrize("method", ["get", "put", "patch", "delete"])
def test_an_outsider_gets_404_for_someone_elses_agent(outsider_api, owner, method):
    AgentFactory(slug="trip-planner", owner=owner, name="Mine")

    response = getattr(outsider_api, method)(
        "/api/agents/trip-planner/", payload(name="Taken over"), format="json"
    )

    assert response.status_code == 404
    assert Agent.objects.get(slug="trip-planner").name == "Mine"


@pytest.mark.parametrize(
    ("method", "url"),
    [
        ("get", "/api/agents/"),
        ("post", "/api/agents/"),
        ("get", "/api/agents/shared/"),
        ("put", "/api/agents/shared/"),
        ("patch", "/api/agents/shared/"),
        ("delete", "/api/agents/shared/"),
    ],
)
def test_anonymous_requests_are_refused_with_401(anon_client, method, url):
    AgentFactory(slug="shared", code=True)
    count = Agent.objects.count()

    response = getattr(anon_client, method)(url, payload(), format="json")

    assert response.status_code == 401
    assert Agent.objects.count() == count


# --- validation -----------------------------------------------------------------------------
def test_a_duplicate_slug_is_refused_with_a_friendly_message(api, owner):
    # One of the user's own agents (another user's never clash: test_name_oracles.py).
    AgentFactory(slug="trip-planner", owner=owner)
    count = Agent.objects.count()

    response = api.post("/api/agents/", payload(), format="json")

    assert response.status_code == 400
    assert response.json() == {
        "slug": ["An agent with the slug 'trip-planner' already exists; pick another one."]
    }
    assert Agent.objects.count() == count


@pytest.mark.parametrize("slug", ["Trip Planner", "-leading-dash", "trip/planner", ""])
def test_a_bad_slug_is_refused(api, slug):
    count = Agent.objects.count()

    response = api.post("/api/agents/", payload(slug=slug), format="json")

    assert response.status_code == 400
    assert "slug" in response.json()
    assert Agent.objects.count() == count


@pytest.mark.parametrize("model", ["gpt-4o", "/gpt-4o", "openai/", "openai/gpt 4o", ""])
def test_a_model_string_without_a_provider_is_refused(api, model):
    response = api.post("/api/agents/", payload(model=model), format="json")

    assert response.status_code == 400
    assert "model" in response.json()
    assert not Agent.objects.filter(slug="trip-planner").exists()


def test_the_model_message_says_what_to_write(api):
    response = api.post("/api/agents/", payload(model="gpt-4o"), format="json")

    assert response.json()["model"] == [
        "'gpt-4o' is not a model string: use provider/model, "
        "for example openai/gpt-4o-mini or studio/scripted."
    ]


@pytest.mark.parametrize(
    "instructions",
    [
        42,
        ["Be brief.", {"role": "system", "content": "mixed"}],
        {"role": "user", "content": "Not a system message."},
        {"role": "system", "content": "x", "extra": 1},
        None,
    ],
)
def test_bad_instructions_are_refused(api, instructions):
    response = api.post("/api/agents/", payload(instructions=instructions), format="json")

    assert response.status_code == 400
    assert "instructions" in response.json()
    assert not Agent.objects.filter(slug="trip-planner").exists()


@pytest.mark.parametrize(
    ("options", "path"),
    [
        ({"maxSteps": 0}, "$.maxSteps"),
        ({"maxSteps": "5"}, "$.maxSteps"),
        ({"temperature": 3}, "$.temperature"),
        ({"toolChoice": "sometimes"}, "$.toolChoice"),
        ({"activeTools": "weather"}, "$.activeTools"),
        ({"autoResume": "yes"}, "$.autoResume"),
    ],
)
def test_bad_default_options_are_refused_with_their_path(api, options, path):
    response = api.post("/api/agents/", payload(default_options=options), format="json")

    assert response.status_code == 400
    assert response.json()["default_options"][0].startswith(f"{path}: ")


def test_a_failed_update_leaves_the_agent_as_it_was(api, owner):
    AgentFactory(slug="trip-planner", owner=owner, name="Mine", model="openai/gpt-4o")

    response = api.put(
        "/api/agents/trip-planner/", payload(name="New name", model="no-provider"), format="json"
    )

    assert response.status_code == 400
    agent = Agent.objects.get(slug="trip-planner")
    assert (agent.name, agent.model, agent.version) == ("Mine", "openai/gpt-4o", 1)
