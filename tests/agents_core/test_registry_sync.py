"""agents_core.registry.definitions_sync: code definitions become code-owned rows."""

from __future__ import annotations

import pytest

from agents_core.definitions import Agent as AgentDefinition
from agents_core.definitions import DefinitionError, create_tool
from agents_core.models import Agent, Run, Source, Thread
from agents_core.registry import Registry, definitions_sync
from tests.agents_core.factories import AgentFactory, AgentToolFactory
from tests.tools_app.factories import ToolFactory
from tools_app.models import Tool

pytestmark = pytest.mark.django_db

SCHEMA = {"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]}


def probe_tool(description: str = "Echoes text back.") -> object:
    return create_tool(
        id="sync_probe",
        description=description,
        input_schema=SCHEMA,
        execute=lambda input, context: {"text": input["text"]},
    )


def registry(*, description: str = "Echoes text back.", with_child: bool = True) -> Registry:
    tool = probe_tool(description)
    child = AgentDefinition(id="sync-child", name="Sync child", instructions="Help.")
    parent = AgentDefinition(
        id="sync-parent",
        name="Sync parent",
        instructions=["Delegate.", "Echo."],
        model="studio/scripted",
        tools={"echo": tool},
        agents={"child": child} if with_child else {},
    )
    built = Registry()
    built.add_agent(parent)
    return built


def test_the_first_sync_creates_code_owned_rows_and_bindings():
    report = definitions_sync(registry=registry())

    assert set(report.created) == {"tool:sync_probe", "agent:sync-parent", "agent:sync-child"}
    parent = Agent.objects.get(slug="sync-parent")
    assert (parent.source, parent.owner, parent.instructions) == (
        Source.CODE,
        None,
        ["Delegate.", "Echo."],
    )
    assert Tool.objects.get(name="sync_probe").input_schema == SCHEMA
    binding = parent.tool_bindings.get()
    assert (binding.key, binding.tool.name, binding.source) == ("echo", "sync_probe", Source.CODE)
    sub = parent.subagent_bindings.get()
    assert (sub.key, sub.child.slug, sub.source) == ("child", "sync-child", Source.CODE)


def test_a_second_sync_of_the_same_definitions_writes_nothing():
    definitions_sync(registry=registry())
    stamps = {
        "tool": Tool.objects.get(name="sync_probe").updated_at,
        "parent": Agent.objects.get(slug="sync-parent").updated_at,
        "child": Agent.objects.get(slug="sync-child").updated_at,
    }
    binding_ids = set(
        Agent.objects.get(slug="sync-parent").tool_bindings.values_list("id", flat=True)
    )

    report = definitions_sync(registry=registry())

    assert (report.created, report.updated) == ([], [])
    assert set(report.unchanged) >= {"tool:sync_probe", "agent:sync-parent", "agent:sync-child"}
    assert {
        "tool": Tool.objects.get(name="sync_probe").updated_at,
        "parent": Agent.objects.get(slug="sync-parent").updated_at,
        "child": Agent.objects.get(slug="sync-child").updated_at,
    } == stamps
    parent = Agent.objects.get(slug="sync-parent")
    assert set(parent.tool_bindings.values_list("id", flat=True)) == binding_ids


def test_a_changed_description_is_picked_up():
    definitions_sync(registry=registry())

    report = definitions_sync(registry=registry(description="Echoes text, louder."))

    assert report.updated == ["tool:sync_probe"]
    assert Tool.objects.get(name="sync_probe").description == "Echoes text, louder."


def test_a_sub_agent_removed_from_code_is_unbound_but_studio_bindings_stay(owner):
    definitions_sync(registry=registry())
    parent = Agent.objects.get(slug="sync-parent")
    AgentToolFactory(agent=parent, key="mine", tool=ToolFactory(owner=owner), source=Source.STUDIO)

    report = definitions_sync(registry=registry(with_child=False))

    assert "agent:sync-parent" in report.updated
    assert not parent.subagent_bindings.exists()
    assert set(parent.tool_bindings.values_list("key", flat=True)) == {"echo", "mine"}


def test_a_definition_removed_from_code_is_marked_gone_and_keeps_its_history(owner):
    definitions_sync(registry=registry())
    parent = Agent.objects.get(slug="sync-parent")
    thread = Thread.objects.create(agent=parent, owner=owner, resource_id=str(owner.pk))
    run = Run.objects.create(thread=thread, agent=parent, status="completed")

    report = definitions_sync(registry=Registry())

    assert {"tool:sync_probe", "agent:sync-parent", "agent:sync-child"} <= set(report.gone)
    parent.refresh_from_db()
    assert parent.gone_at is not None
    assert Tool.objects.get(name="sync_probe").gone_at is not None
    assert Thread.objects.filter(pk=thread.pk).exists()
    assert Run.objects.filter(pk=run.pk).exists()


def test_a_definition_that_comes_back_is_live_again():
    definitions_sync(registry=registry())
    definitions_sync(registry=Registry())

    report = definitions_sync(registry=registry())

    assert "agent:sync-parent" in report.updated
    assert Agent.objects.get(slug="sync-parent").gone_at is None
    assert Tool.objects.get(name="sync_probe").gone_at is None


def test_a_gone_agent_disappears_from_the_api_but_its_threads_remain(api, owner):
    definitions_sync(registry=registry())
    parent = Agent.objects.get(slug="sync-parent")
    Thread.objects.create(agent=parent, owner=owner, resource_id=str(owner.pk))

    definitions_sync(registry=Registry())

    assert api.get("/api/agents/sync-parent/").status_code == 404
    assert Thread.objects.filter(agent=parent).count() == 1


def test_a_studio_tool_with_the_name_of_a_code_tool_raises_a_clear_error(owner):
    ToolFactory(name="sync_probe", owner=owner)

    with pytest.raises(DefinitionError, match="has the name of a tool created in the studio"):
        definitions_sync(registry=registry())

    # The sync is one transaction: nothing of it was written.
    assert not Agent.objects.filter(slug__in=["sync-parent", "sync-child"]).exists()
    assert Tool.objects.get(name="sync_probe").source == Source.STUDIO


def test_a_studio_agent_with_the_id_of_a_code_agent_raises_a_clear_error(owner):
    AgentFactory(slug="sync-child", owner=owner)

    with pytest.raises(DefinitionError, match="has the id of an agent created in the studio"):
        definitions_sync(registry=registry())

    assert not Tool.objects.filter(name="sync_probe").exists()
    assert Agent.objects.get(slug="sync-child").source == Source.STUDIO


def test_a_code_tool_cannot_take_a_name_the_studio_reserves():
    with pytest.raises(DefinitionError, match="reserved by the studio"):
        create_tool(
            id="new",
            description="x",
            input_schema={"type": "object"},
            execute=lambda data, context=None: data,
        )
