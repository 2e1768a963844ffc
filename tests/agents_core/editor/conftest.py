"""Editor fixtures: code agents synced from definitions, and editors with permissions."""

from __future__ import annotations

import pytest
from django.contrib.auth.models import Permission

from agents_core.definitions import Agent as AgentDefinition
from agents_core.definitions import create_tool
from agents_core.models import Agent
from agents_core.registry import Registry, definitions_sync

LOOKUP = create_tool(
    id="editor_test_lookup",
    description="Looks a word up.",
    input_schema={"type": "object", "properties": {"word": {"type": "string"}}},
    execute=lambda input, context: {"word": input.get("word")},
)
CONVERT = create_tool(
    id="editor_test_convert",
    description="Converts a value.",
    execute=lambda input, context: {"ok": True},
)
EXTRA = create_tool(
    id="editor_test_extra",
    description="An extra tool editors may add.",
    execute=lambda input, context: {"ok": True},
)

INSTRUCTIONS = "You are a careful assistant.\nAnswer briefly.\nCite your tools."


def definition(slug: str = "editor-agent", *, editor=None, instructions=INSTRUCTIONS, tools=None):
    return AgentDefinition(
        id=slug,
        name=f"Agent {slug}",
        instructions=instructions,
        model="studio/scripted",
        tools=tools if tools is not None else {"lookup": LOOKUP, "convert": CONVERT},
        editor=editor,
    )


def sync(*definitions: AgentDefinition) -> None:
    registry = Registry()
    registry.add_tool(EXTRA)
    for item in definitions:
        registry.add_agent(item)
    definitions_sync(registry=registry)


@pytest.fixture
def code_agent_factory(db):
    def make(slug: str = "editor-agent", **kwargs) -> Agent:
        sync(definition(slug, **kwargs))
        return Agent.objects.get(slug=slug)

    return make


@pytest.fixture
def code_agent(code_agent_factory) -> Agent:
    return code_agent_factory()


def grant(user, *codenames: str):
    """Give `user` agents_core permissions and return a fresh instance (perm cache)."""
    for codename in codenames:
        user.user_permissions.add(
            Permission.objects.get(content_type__app_label="agents_core", codename=codename)
        )
    return type(user).objects.get(pk=user.pk)


@pytest.fixture
def editor(owner):
    """`owner` with the change permission on agents: may edit code agents."""
    return grant(owner, "change_agent", "view_agent")


@pytest.fixture
def second_editor(teammate):
    return grant(teammate, "change_agent", "view_agent")
