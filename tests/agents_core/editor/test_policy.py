"""The policy matrix: every `editor` form against every field, through the policy function,
the REST API and the run (agents_core.overrides). The admin's side is in test_admin.py."""

from __future__ import annotations

import pytest
from rest_framework.test import APIClient

from agents_core import overrides
from agents_core.editor.policy import FIELDS, field_ownership
from agents_core.models import Agent, EditorOverride

from .conftest import EXTRA, INSTRUCTIONS

FORMS = {
    "omitted": (None, {"instructions", "tools", "tool_descriptions"}),
    "false": (False, set()),
    "instructions": ({"instructions": True}, {"instructions"}),
    "tools": ({"tools": True}, {"tools", "tool_descriptions"}),
    "tool-descriptions": ({"tools": {"description": True}}, {"tool_descriptions"}),
    "instructions+descriptions": (
        {"instructions": True, "tools": {"description": True}},
        {"instructions", "tool_descriptions"},
    ),
    "all-false": ({"instructions": False, "tools": False}, set()),
}
# A change of each field, as the API's payload.
CHANGES = {
    "id": {"id": "renamed-agent"},
    "name": {"name": "Renamed"},
    "description": {"description": "Changed."},
    "model": {"model": "openai/gpt-4o"},
    "instructions": {"instructions": "Matrix instructions."},
    "tools": {"tools_removed": ["convert"], "tools_added": {"extra": EXTRA.id}},
    "tool_descriptions": {"tool_descriptions": {"lookup": "Matrix description."}},
}
MATRIX = [(form, name) for form in FORMS for name in FIELDS]


def applied(agent: Agent, name: str) -> bool:
    """Does the run (or the agent row) see the matrix change of `name`?"""
    agent = Agent.objects.get(pk=agent.pk)
    bindings = {b.key: b for b in overrides.effective_tool_bindings(agent)}
    return {
        "id": agent.slug == "renamed-agent",
        "name": agent.name == "Renamed",
        "description": agent.description == "Changed.",
        "model": agent.model == "openai/gpt-4o",
        "instructions": overrides.effective_instructions(agent) == "Matrix instructions.",
        "tools": set(bindings) == {"lookup", "extra"},
        "tool_descriptions": overrides.effective_tool_description(bindings["lookup"])
        == "Matrix description.",
    }[name]


def test_the_field_list_is_what_the_matrix_covers():
    assert set(CHANGES) == set(FIELDS)


@pytest.mark.parametrize(("form", "name"), MATRIX)
def test_the_policy_function_decides_each_field(code_agent_factory, form, name):
    policy, editable = FORMS[form]
    agent = code_agent_factory(editor=policy)
    assert field_ownership(agent)[name] == ("editor" if name in editable else "code")


@pytest.mark.parametrize(("form", "name"), MATRIX)
def test_the_api_applies_editable_fields_and_strips_code_owned_ones(
    code_agent_factory, editor, form, name
):
    policy, editable = FORMS[form]
    agent = code_agent_factory(editor=policy)
    client = APIClient()
    client.force_authenticate(editor)
    response = client.patch(
        f"/api/agents/{agent.slug}/overrides/", CHANGES[name], format="json", HTTP_IF_MATCH='"1"'
    )
    assert response.status_code == 200, response.json()
    if name in editable:
        assert response.json()["stripped"] == []
        assert applied(agent, name)
        assert (
            name in response.json()["ownership"] and response.json()["ownership"][name] == "editor"
        )
    else:
        assert response.json()["stripped"] == sorted(CHANGES[name])
        assert not applied(agent, name)
        assert response.json()["revision"] is None


@pytest.mark.parametrize(("form", "name"), MATRIX)
def test_the_run_ignores_stored_overrides_of_code_owned_fields(code_agent_factory, form, name):
    """Overrides written behind the services' back (an old policy, a raw edit) still only
    reach the run for fields the current policy opens."""
    policy, editable = FORMS[form]
    agent = code_agent_factory(editor=policy)
    EditorOverride.objects.create(
        agent=agent,
        instructions="Matrix instructions.",
        tool_descriptions={"lookup": "Matrix description."},
        tools_removed=["convert"],
        tools_added={"extra": EXTRA.id},
    )
    if name in {"instructions", "tools", "tool_descriptions"}:
        assert applied(agent, name) == (name in editable)
    else:
        assert not applied(agent, name)  # identity, name, model: no override can reach them


def test_a_studio_agent_owner_may_edit_everything_but_its_id(code_agent, owner):
    agent = Agent.objects.create(
        slug="studio-one", name="S", model="studio/scripted", instructions=INSTRUCTIONS, owner=owner
    )
    assert {n for n, o in field_ownership(agent).items() if o == "editor"} == set(FIELDS) - {"id"}


@pytest.mark.parametrize("form", list(FORMS))
def test_a_tool_bound_to_a_code_agent_in_the_studio_reaches_the_run_only_if_tools_are_open(
    code_agent_factory, form
):
    """Bindings added through /api/agents/<slug>/tools/ are membership overrides as well."""
    from agents_core.models import AgentTool
    from tools_app.models import Tool

    policy, editable = FORMS[form]
    agent = code_agent_factory(editor=policy)
    AgentTool.objects.create(
        agent=agent,
        tool=Tool.objects.get(name=EXTRA.id),
        key="extra",
        source="studio",
        description_override="Studio description.",
    )
    keys = {b.key for b in overrides.effective_tool_bindings(Agent.objects.get(pk=agent.pk))}
    assert ("extra" in keys) == ("tools" in editable)
