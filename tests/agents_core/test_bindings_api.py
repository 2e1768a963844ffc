"""/api/agents/<slug>/tools/[<key>/]: binding tools to agents."""

from __future__ import annotations

import pytest

from agents_core.models import AgentTool
from tests.agents_core.editor.conftest import grant
from tests.agents_core.factories import AgentFactory, AgentToolFactory, SubAgentFactory
from tests.tools_app.factories import ToolFactory

pytestmark = pytest.mark.django_db


@pytest.fixture
def agent(owner):
    return AgentFactory(slug="planner", owner=owner)


@pytest.fixture
def tool(owner):
    return ToolFactory(name="get_weather", owner=owner, description="Weather by city.")


# --- create and read ------------------------------------------------------------------------
def test_it_binds_the_callers_tool_under_its_name_by_default(api, agent, tool):
    response = api.post("/api/agents/planner/tools/", {"tool": "get_weather"}, format="json")

    assert response.status_code == 201, response.json()
    assert response.json() == {
        "key": "get_weather",
        "tool": "get_weather",
        "tool_kind": "test_echo",
        "tool_description": "Weather by city.",
        "description_override": "",
        "requires_approval": False,
        "source": "studio",
        "position": 0,
        "created_at": response.json()["created_at"],
    }
    assert agent.tool_bindings.get().tool == tool


def test_it_binds_under_a_chosen_key_after_the_existing_tools(api, agent, tool):
    AgentToolFactory(agent=agent, key="first", tool__owner=agent.owner, position=3)

    response = api.post(
        "/api/agents/planner/tools/",
        {"tool": "get_weather", "key": "weather-Now", "description_override": "Use for now."},
        format="json",
    )

    assert response.status_code == 201, response.json()
    binding = agent.tool_bindings.get(key="weather-Now")
    assert (binding.position, binding.description_override) == (4, "Use for now.")


def test_a_code_tool_can_be_bound(api, agent):
    ToolFactory(name="shared_code_tool", code=True)

    response = api.post("/api/agents/planner/tools/", {"tool": "shared_code_tool"}, format="json")

    assert response.status_code == 201


def test_another_users_tool_cannot_be_bound(api, agent, outsider):
    ToolFactory(name="their_tool", owner=outsider)

    response = api.post("/api/agents/planner/tools/", {"tool": "their_tool"}, format="json")

    assert response.status_code == 400
    assert response.json() == {"tool": ["No tool named 'their_tool' that you can use."]}
    assert not agent.tool_bindings.exists()


def test_it_lists_and_reads_bindings(api, agent, tool):
    AgentToolFactory(agent=agent, tool=tool, key="weather")

    listed = api.get("/api/agents/planner/tools/")
    one = api.get("/api/agents/planner/tools/weather/")

    assert listed.status_code == 200
    assert [b["key"] for b in listed.json()] == ["weather"]
    assert one.status_code == 200
    assert one.json()["tool"] == "get_weather"
    assert api.get("/api/agents/planner/tools/nope/").status_code == 404


def test_token_auth_works(token_client, agent, tool):
    response = token_client.post(
        "/api/agents/planner/tools/", {"tool": "get_weather"}, format="json"
    )

    assert response.status_code == 201


# --- update and delete ----------------------------------------------------------------------
def test_patch_changes_the_description_and_the_key(api, agent, tool):
    AgentToolFactory(agent=agent, tool=tool, key="weather")

    response = api.patch(
        "/api/agents/planner/tools/weather/",
        {"key": "forecast", "description_override": "Forecasts.", "requires_approval": True},
        format="json",
    )

    assert response.status_code == 200, response.json()
    binding = agent.tool_bindings.get()
    assert (binding.key, binding.description_override, binding.requires_approval) == (
        "forecast",
        "Forecasts.",
        True,
    )


def test_put_can_rebind_the_key_to_another_tool(api, agent, tool, owner):
    AgentToolFactory(agent=agent, tool=tool, key="weather")
    ToolFactory(name="better_weather", owner=owner)

    response = api.put(
        "/api/agents/planner/tools/weather/", {"tool": "better_weather"}, format="json"
    )

    assert response.status_code == 200, response.json()
    assert agent.tool_bindings.get(key="weather").tool.name == "better_weather"


def test_a_binding_cannot_be_moved_to_another_users_tool(api, agent, tool, outsider):
    AgentToolFactory(agent=agent, tool=tool, key="weather")
    ToolFactory(name="their_tool", owner=outsider)

    response = api.patch(
        "/api/agents/planner/tools/weather/", {"tool": "their_tool"}, format="json"
    )

    assert response.status_code == 400
    assert agent.tool_bindings.get(key="weather").tool == tool


def test_delete_removes_the_binding_but_not_the_tool(api, agent, tool):
    AgentToolFactory(agent=agent, tool=tool, key="weather")

    response = api.delete("/api/agents/planner/tools/weather/")

    assert response.status_code == 204
    assert not agent.tool_bindings.exists()
    tool.refresh_from_db()


# --- validation -----------------------------------------------------------------------------
def test_a_duplicate_key_is_refused(api, agent, tool, owner):
    AgentToolFactory(agent=agent, tool=ToolFactory(owner=owner), key="get_weather")

    response = api.post("/api/agents/planner/tools/", {"tool": "get_weather"}, format="json")

    assert response.status_code == 400
    assert response.json() == {"key": ["The agent already has a tool with the key 'get_weather'."]}
    assert agent.tool_bindings.count() == 1


def test_renaming_onto_a_taken_key_is_refused(api, agent, tool, owner):
    AgentToolFactory(agent=agent, tool=tool, key="weather")
    AgentToolFactory(agent=agent, tool=ToolFactory(owner=owner), key="other")

    response = api.patch("/api/agents/planner/tools/other/", {"key": "weather"}, format="json")

    assert response.status_code == 400
    assert set(agent.tool_bindings.values_list("key", flat=True)) == {"weather", "other"}


def test_the_same_key_is_fine_on_another_agent(api, agent, tool, owner):
    AgentToolFactory(agent=AgentFactory(owner=owner), tool=tool, key="get_weather")

    response = api.post("/api/agents/planner/tools/", {"tool": "get_weather"}, format="json")

    assert response.status_code == 201


@pytest.mark.parametrize("key", ["has space", "dots.are.out", "x" * 65, "ünïcode"])
def test_a_key_the_model_apis_would_refuse_is_refused(api, agent, tool, key):
    response = api.post(
        "/api/agents/planner/tools/", {"tool": "get_weather", "key": key}, format="json"
    )

    assert response.status_code == 400
    assert "key" in response.json()
    assert not agent.tool_bindings.exists()


def test_a_key_that_shadows_a_sub_agent_is_refused(api, agent, tool, owner):
    SubAgentFactory(parent=agent, key="helper", child=AgentFactory(owner=owner))

    response = api.post(
        "/api/agents/planner/tools/", {"tool": "get_weather", "key": "agent-helper"}, format="json"
    )

    assert response.status_code == 400
    assert "sub-agents" in response.json()["key"][0]


def test_an_unknown_tool_is_refused(api, agent):
    response = api.post("/api/agents/planner/tools/", {"tool": "no_such_tool"}, format="json")

    assert response.status_code == 400
    assert "tool" in response.json()


# --- code agents: code bindings are read-only; studio ones follow the editor policy -----------
# (the policy matrix is in test_bindings_policy.py)
@pytest.fixture
def code_agent(owner):
    grant(owner, "change_agent")  # a code agent's bindings need the change permission
    agent = AgentFactory(slug="shared", code=True)
    AgentToolFactory(agent=agent, key="from_code", tool=ToolFactory(code=True), source="code")
    return agent


def test_an_editor_can_add_and_remove_a_studio_binding_on_a_code_agent(api, code_agent):
    ToolFactory(name="shared_tool", code=True)

    added = api.post("/api/agents/shared/tools/", {"tool": "shared_tool"}, format="json")
    removed = api.delete("/api/agents/shared/tools/shared_tool/")

    assert added.status_code == 201
    assert added.json()["source"] == "studio"
    assert removed.status_code == 204
    assert list(code_agent.tool_bindings.values_list("key", flat=True)) == ["from_code"]


def test_a_private_tool_cannot_be_added_to_a_code_agent_everyone_runs(api, code_agent, tool):
    response = api.post("/api/agents/shared/tools/", {"tool": "get_weather"}, format="json")

    assert response.status_code == 400
    assert response.json() == {
        "tool": [
            "Agent 'shared' is shared by everyone (defined in code), so only shared tools "
            "can be added to it; add 'get_weather' to your own agents."
        ]
    }
    assert list(code_agent.tool_bindings.values_list("key", flat=True)) == ["from_code"]


@pytest.mark.parametrize("method", ["put", "patch", "delete"])
def test_a_code_owned_binding_is_read_only(api, code_agent, method):
    response = getattr(api, method)(
        "/api/agents/shared/tools/from_code/", {"description_override": "Mine now."}, format="json"
    )

    assert response.status_code == 403
    assert response.json()["detail"] == (
        "Binding 'from_code' is defined in code; edit its overrides instead."
    )
    assert code_agent.tool_bindings.get().description_override == ""


# --- ownership ------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("method", "url"),
    [
        ("get", "/api/agents/planner/tools/"),
        ("post", "/api/agents/planner/tools/"),
        ("get", "/api/agents/planner/tools/weather/"),
        ("put", "/api/agents/planner/tools/weather/"),
        ("patch", "/api/agents/planner/tools/weather/"),
        ("delete", "/api/agents/planner/tools/weather/"),
    ],
)
def test_an_outsider_gets_404_for_the_bindings_of_someone_elses_agent(
    outsider_api, outsider, agent, tool, method, url
):
    AgentToolFactory(agent=agent, tool=tool, key="weather")
    ToolFactory(name="outsider_tool", owner=outsider)

    response = getattr(outsider_api, method)(
        url, {"tool": "outsider_tool", "description_override": "x"}, format="json"
    )

    assert response.status_code == 404
    assert list(agent.tool_bindings.values_list("key", "description_override")) == [("weather", "")]


@pytest.mark.parametrize(
    ("method", "url"),
    [
        ("get", "/api/agents/planner/tools/"),
        ("post", "/api/agents/planner/tools/"),
        ("get", "/api/agents/planner/tools/weather/"),
        ("put", "/api/agents/planner/tools/weather/"),
        ("patch", "/api/agents/planner/tools/weather/"),
        ("delete", "/api/agents/planner/tools/weather/"),
    ],
)
def test_anonymous_requests_are_refused_with_401(anon_client, agent, tool, method, url):
    AgentToolFactory(agent=agent, tool=tool, key="weather")

    response = getattr(anon_client, method)(url, {"tool": "get_weather"}, format="json")

    assert response.status_code == 401
    assert AgentTool.objects.filter(agent=agent).count() == 1
