"""No answer tells an outsider that another user has an agent slug or a tool name: slugs
and names are unique per owner (and among the shared code agents and tools), so creating,
importing or copying under a name someone else has answers exactly as under a free one,
and the other user's object is untouched. The owner's own clashes are still reported."""

from __future__ import annotations

from typing import Any

import pytest

from agents_core.models import Agent
from tests.agents_core.factories import AgentFactory
from tests.tools_app.conftest import tool_types  # noqa: F401 (the test_echo tool type)
from tests.tools_app.factories import ToolFactory
from tools_app.models import Tool

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("tool_types")]


@pytest.fixture
def owners_things(owner) -> tuple[Agent, Tool]:
    agent = AgentFactory(slug="secret-plan", name="Secret plan", owner=owner)
    tool = ToolFactory(name="secret_tool", owner=owner, description="Owner's tool.")
    return agent, tool


def _same(answer: Any, slug: str, free: str) -> Any:
    """The answer with the taken name written as the free one, to compare the two."""
    text = repr(answer).replace(slug, free)
    return text


def _stable(value: Any) -> Any:
    """The value without what differs between any two rows (ids and times)."""
    if isinstance(value, dict):
        drop = ("id", "created_at", "updated_at")
        return {k: _stable(v) for k, v in value.items() if k not in drop}
    if isinstance(value, list):
        return [_stable(item) for item in value]
    return value


def _body(response) -> Any:
    return _stable(response.json())


def test_an_outsider_creates_an_agent_with_anothers_slug_as_with_a_free_one(
    outsider_api, owners_things, owner
):
    taken = outsider_api.post(
        "/api/agents/", {"slug": "secret-plan", "name": "Mine"}, format="json"
    )
    free = outsider_api.post("/api/agents/", {"slug": "free-plan", "name": "Mine"}, format="json")

    assert taken.status_code == free.status_code == 201, taken.content
    assert _same(_body(taken), "secret-plan", "free-plan") == _same(
        _body(free), "secret-plan", "free-plan"
    )
    # Each sees their own under the slug; the owner's agent is untouched.
    assert outsider_api.get("/api/agents/secret-plan/").json()["name"] == "Mine"
    assert Agent.objects.get(slug="secret-plan", owner=owner).name == "Secret plan"


def test_the_owner_is_still_told_about_their_own_slug_and_a_code_agents(api, owners_things):
    own = api.post("/api/agents/", {"slug": "secret-plan", "name": "Again"}, format="json")
    code = api.post("/api/agents/", {"slug": "weather-assistant", "name": "X"}, format="json")

    assert own.status_code == code.status_code == 400
    assert "slug" in own.json() and "slug" in code.json()


def test_an_outsider_creates_a_tool_with_anothers_name_as_with_a_free_one(
    outsider_api, owners_things, owner
):
    def create(name: str):
        return outsider_api.post("/api/tools/", {"name": name, "kind": "test_echo"}, format="json")

    taken, free = create("secret_tool"), create("free_tool")

    assert taken.status_code == free.status_code == 201, taken.content
    assert _same(_body(taken), "secret_tool", "free_tool") == _same(
        _body(free), "secret_tool", "free_tool"
    )
    assert Tool.objects.get(name="secret_tool", owner=owner).description == "Owner's tool."
    # The owner's own name is still refused to the owner.
    assert create("free_tool").status_code == 400


def _document(slug: str, tool: str) -> dict:
    return {
        "format": "agent-studio.agent",
        "version": 1,
        "agent": slug,
        "agents": [{"slug": slug, "name": "Imported", "tools": [{"key": "t", "tool": tool}]}],
        "tools": [{"name": tool, "kind": "test_echo", "description": "Imported tool."}],
    }


@pytest.mark.parametrize("dry_run", [True, False])
def test_an_outsider_imports_under_anothers_names_as_under_free_ones(
    outsider_api, owners_things, owner, dry_run
):
    def post(slug: str, tool: str):
        document = _document(slug, tool)
        return outsider_api.post(
            "/api/agents/import", {"document": document, "dry_run": dry_run}, format="json"
        )

    taken, free = post("secret-plan", "secret_tool"), post("free-plan", "free_tool")

    assert taken.status_code == free.status_code == (200 if dry_run else 201), taken.content
    renamed = taken.json()
    assert _same(_same(renamed, "secret-plan", "free-plan"), "secret_tool", "free_tool") == (
        _same(_same(free.json(), "secret-plan", "free-plan"), "secret_tool", "free_tool")
    )
    assert Agent.objects.get(slug="secret-plan", owner=owner).name == "Secret plan"
    assert Tool.objects.get(name="secret_tool", owner=owner).description == "Owner's tool."
    if not dry_run:
        mine = Agent.objects.get(slug="secret-plan", owner__username="outsider")
        assert [b.tool.owner.username for b in mine.tool_bindings.all()] == ["outsider"]


def test_an_outsider_duplicates_onto_anothers_slug_as_onto_a_free_one(outsider_api, owners_things):
    def copy(slug: str):
        return outsider_api.post(
            "/api/agents/weather-assistant/duplicate", {"slug": slug, "name": "Copy"}, format="json"
        )

    taken, free = copy("secret-plan"), copy("free-plan")

    assert taken.status_code == free.status_code == 201, taken.content
    assert _same(_body(taken), "secret-plan", "free-plan") == _same(
        _body(free), "secret-plan", "free-plan"
    )


def test_a_connector_says_a_name_is_taken_only_for_the_users_own_tools(api, outsider_api, owner):
    ToolFactory(name="jira_search_issues", owner=owner)

    def taken(client) -> bool:
        ops = {o["name"]: o for o in client.get("/api/connectors/jira/").json()["operations"]}
        return ops["jira_search_issues"]["name_taken"]

    assert taken(api) is True
    assert taken(outsider_api) is False
