"""/api/agents/<slug>/subagents/[<key>/]: sub-agent bindings, without cycles."""

from __future__ import annotations

import pytest

from agents_core.models import SubAgent
from tests.agents_core.editor.conftest import grant
from tests.agents_core.factories import AgentFactory, AgentToolFactory, SubAgentFactory

pytestmark = pytest.mark.django_db


@pytest.fixture
def boss(owner):
    return AgentFactory(slug="boss", owner=owner)


@pytest.fixture
def helper(owner):
    return AgentFactory(slug="helper", owner=owner, name="Helper", description="Helps.")


def edges():
    """Sub-agent bindings between studio agents (the demo code agents have their own)."""
    studio = SubAgent.objects.filter(parent__owner__isnull=False)
    return set(studio.values_list("parent__slug", "child__slug"))


# --- create and read ------------------------------------------------------------------------
def test_it_binds_a_sub_agent_under_its_slug_by_default(api, boss, helper):
    response = api.post("/api/agents/boss/subagents/", {"agent": "helper"}, format="json")

    assert response.status_code == 201, response.json()
    body = response.json()
    assert (body["key"], body["tool_name"], body["agent"], body["source"]) == (
        "helper",
        "agent-helper",
        "helper",
        "studio",
    )
    assert (body["agent_name"], body["agent_description"]) == ("Helper", "Helps.")
    assert edges() == {("boss", "helper")}


def test_a_code_agent_can_be_a_sub_agent(api, boss):
    AgentFactory(slug="shared", code=True)

    response = api.post(
        "/api/agents/boss/subagents/", {"agent": "shared", "key": "researcher"}, format="json"
    )

    assert response.status_code == 201
    assert response.json()["tool_name"] == "agent-researcher"


def test_another_users_agent_cannot_be_a_sub_agent(api, boss, outsider):
    AgentFactory(slug="theirs", owner=outsider)

    response = api.post("/api/agents/boss/subagents/", {"agent": "theirs"}, format="json")

    assert response.status_code == 400
    assert response.json() == {"agent": ["No agent with the slug 'theirs' that you can use."]}
    assert not boss.subagent_bindings.exists()


def test_it_lists_and_reads_sub_agents(api, boss, helper):
    SubAgentFactory(parent=boss, child=helper, key="aide")

    listed = api.get("/api/agents/boss/subagents/")
    one = api.get("/api/agents/boss/subagents/aide/")

    assert [b["key"] for b in listed.json()] == ["aide"]
    assert one.json()["agent"] == "helper"
    assert api.get("/api/agents/boss/subagents/nope/").status_code == 404


def test_token_auth_works(token_client, boss, helper):
    response = token_client.post("/api/agents/boss/subagents/", {"agent": "helper"}, format="json")

    assert response.status_code == 201


# --- update and delete ----------------------------------------------------------------------
def test_patch_renames_and_redescribes_a_sub_agent(api, boss, helper):
    SubAgentFactory(parent=boss, child=helper, key="aide")

    response = api.patch(
        "/api/agents/boss/subagents/aide/",
        {"key": "assistant", "description_override": "Ask it anything."},
        format="json",
    )

    assert response.status_code == 200, response.json()
    binding = boss.subagent_bindings.get()
    assert (binding.key, binding.description_override) == ("assistant", "Ask it anything.")


def test_delete_removes_the_binding_but_not_the_agent(api, boss, helper):
    SubAgentFactory(parent=boss, child=helper, key="aide")

    assert api.delete("/api/agents/boss/subagents/aide/").status_code == 204
    assert edges() == set()
    helper.refresh_from_db()


# --- validation: no self, no cycles ---------------------------------------------------------
def test_an_agent_cannot_be_its_own_sub_agent(api, boss):
    response = api.post("/api/agents/boss/subagents/", {"agent": "boss"}, format="json")

    assert response.status_code == 400
    assert response.json() == {"agent": ["An agent cannot be its own sub-agent."]}
    assert edges() == set()


def test_a_sub_agent_that_would_close_a_cycle_is_refused_and_the_cycle_is_shown(
    api, owner, boss, helper
):
    intern = AgentFactory(slug="intern", owner=owner)
    SubAgentFactory(parent=boss, child=helper)
    SubAgentFactory(parent=helper, child=intern)

    response = api.post("/api/agents/intern/subagents/", {"agent": "boss"}, format="json")

    assert response.status_code == 400
    assert response.json() == {
        "agent": [
            "'boss' cannot be a sub-agent of 'intern': that would make a cycle "
            "(intern → boss → helper → intern)."
        ]
    }
    assert edges() == {("boss", "helper"), ("helper", "intern")}


def test_moving_a_binding_onto_an_ancestor_is_refused(api, owner, boss, helper):
    SubAgentFactory(parent=boss, child=helper)
    SubAgentFactory(parent=helper, child=AgentFactory(slug="intern", owner=owner), key="aide")

    response = api.patch("/api/agents/helper/subagents/aide/", {"agent": "boss"}, format="json")

    assert response.status_code == 400
    assert "cycle" in response.json()["agent"][0]
    assert edges() == {("boss", "helper"), ("helper", "intern")}


def test_a_diamond_is_not_a_cycle(api, owner, boss, helper):
    shared = AgentFactory(slug="shared-child", owner=owner)
    SubAgentFactory(parent=boss, child=helper)
    SubAgentFactory(parent=helper, child=shared)

    response = api.post("/api/agents/boss/subagents/", {"agent": "shared-child"}, format="json")

    assert response.status_code == 201


def test_a_duplicate_key_is_refused(api, owner, boss, helper):
    SubAgentFactory(parent=boss, child=AgentFactory(owner=owner), key="helper")

    response = api.post("/api/agents/boss/subagents/", {"agent": "helper"}, format="json")

    assert response.status_code == 400
    assert response.json() == {"key": ["The agent already has a sub-agent with the key 'helper'."]}


def test_a_key_that_clashes_with_a_tool_key_is_refused(api, owner, boss, helper):
    AgentToolFactory(agent=boss, key="agent-helper", tool__owner=owner)

    response = api.post("/api/agents/boss/subagents/", {"agent": "helper"}, format="json")

    assert response.status_code == 400
    assert "agent-helper" in response.json()["key"][0]


@pytest.mark.parametrize("key", ["x" * 59, "has space", "a/b"])
def test_a_key_that_makes_a_bad_tool_name_is_refused(api, boss, helper, key):
    response = api.post(
        "/api/agents/boss/subagents/", {"agent": "helper", "key": key}, format="json"
    )

    assert response.status_code == 400
    assert "key" in response.json()
    assert edges() == set()


# --- code agents ----------------------------------------------------------------------------
def test_a_code_agent_takes_only_code_agents_as_sub_agents(api, owner, helper):
    grant(owner, "change_agent")  # a code agent's bindings need the change permission
    parent = AgentFactory(slug="shared", code=True)
    AgentFactory(slug="shared-child", code=True)

    private = api.post("/api/agents/shared/subagents/", {"agent": "helper"}, format="json")
    shared = api.post("/api/agents/shared/subagents/", {"agent": "shared-child"}, format="json")

    assert private.status_code == 400
    assert "only shared (code) agents" in private.json()["agent"][0]
    assert shared.status_code == 201
    assert list(parent.subagent_bindings.values_list("key", flat=True)) == ["shared-child"]


def test_a_code_owned_sub_agent_binding_is_read_only(api):
    parent = AgentFactory(slug="shared", code=True)
    SubAgentFactory(parent=parent, child=AgentFactory(code=True), key="coded", source="code")

    response = api.delete("/api/agents/shared/subagents/coded/")

    assert response.status_code == 403
    assert "defined in code" in response.json()["detail"]
    assert parent.subagent_bindings.count() == 1


# --- ownership ------------------------------------------------------------------------------
URLS = [
    ("get", "/api/agents/boss/subagents/"),
    ("post", "/api/agents/boss/subagents/"),
    ("get", "/api/agents/boss/subagents/aide/"),
    ("put", "/api/agents/boss/subagents/aide/"),
    ("patch", "/api/agents/boss/subagents/aide/"),
    ("delete", "/api/agents/boss/subagents/aide/"),
]


@pytest.mark.parametrize(("method", "url"), URLS)
def test_an_outsider_gets_404_for_someone_elses_sub_agents(
    outsider_api, outsider, boss, helper, method, url
):
    SubAgentFactory(parent=boss, child=helper, key="aide")
    AgentFactory(slug="outsider-agent", owner=outsider)

    response = getattr(outsider_api, method)(url, {"agent": "outsider-agent"}, format="json")

    assert response.status_code == 404
    assert edges() == {("boss", "helper")}


@pytest.mark.parametrize(("method", "url"), URLS)
def test_anonymous_requests_are_refused_with_401(anon_client, boss, helper, method, url):
    SubAgentFactory(parent=boss, child=helper, key="aide")

    response = getattr(anon_client, method)(url, {"agent": "helper"}, format="json")

    assert response.status_code == 401
    assert edges() == {("boss", "helper")}
