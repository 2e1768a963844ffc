"""Editor services: stripping, versions, revisions, restore, reset, and the run's view."""

from __future__ import annotations

import pytest

from agents_core import overrides
from agents_core.editor.services import documents, permissions, revisions
from agents_core.models import Agent, EditorOverride, Revision
from common.exceptions import ApplicationError, Conflict

from .conftest import EXTRA, INSTRUCTIONS, LOOKUP, definition, sync


def _binding(agent: Agent, key: str):
    return next(b for b in overrides.effective_tool_bindings(agent) if b.key == key)


def test_a_save_strips_code_owned_fields_and_says_which(code_agent, editor):
    result = revisions.override_save(
        lock_id=None,
        agent=code_agent,
        user=editor,
        version=code_agent.version,
        data={"instructions": "New text.", "name": "Renamed", "model": "openai/gpt-4o", "id": "x"},
    )
    assert result.stripped == ["id", "model", "name"]
    agent = Agent.objects.get(pk=code_agent.pk)
    assert (agent.name, agent.model, agent.slug) == (
        code_agent.name,
        "studio/scripted",
        "editor-agent",
    )
    assert overrides.effective_instructions(agent) == "New text."
    assert result.revision.fields == ["instructions"]
    assert result.revision.stripped == ["id", "model", "name"]


def test_a_save_never_drops_an_allowed_field_it_cannot_store(code_agent, editor):
    with pytest.raises(ApplicationError) as exc:
        revisions.override_save(
            lock_id=None,
            agent=code_agent,
            user=editor,
            version=code_agent.version,
            data={"instructions": "ok", "instructions_typo": "lost?"},
        )
    assert exc.value.extra["unknown"] == ["instructions_typo"]
    assert not EditorOverride.objects.filter(agent=code_agent).exists()


def test_invalid_instructions_are_refused_with_a_field_error(code_agent, editor):
    with pytest.raises(ApplicationError) as exc:
        revisions.override_save(
            lock_id=None, agent=code_agent, user=editor, version=1, data={"instructions": 42}
        )
    assert "instructions" in exc.value.extra


def test_every_save_bumps_the_version_and_records_a_revision(code_agent, editor):
    first = revisions.override_save(
        lock_id=None, agent=code_agent, user=editor, version=1, data={"instructions": "One."}
    )
    second = revisions.override_save(
        lock_id=None,
        agent=code_agent,
        user=editor,
        version=2,
        data={"tool_descriptions": {"lookup": "Find a word."}},
    )
    assert second.agent.version == 3
    assert [r.version for r in Revision.objects.filter(agent=code_agent)] == [3, 2]
    assert first.revision.before["instructions"] is None
    assert first.revision.after["instructions"] == "One."
    assert second.revision.before["tool_descriptions"] == {}
    assert second.revision.after["tool_descriptions"] == {"lookup": "Find a word."}
    assert second.revision.author == editor


def test_a_stale_save_is_refused_with_the_current_values_and_who_changed_them(
    code_agent, editor, second_editor
):
    revisions.override_save(
        lock_id=None, agent=code_agent, user=editor, version=1, data={"instructions": "Mine."}
    )
    with pytest.raises(Conflict) as exc:
        revisions.override_save(
            lock_id=None,
            agent=code_agent,
            user=second_editor,
            version=1,
            data={"instructions": "Theirs."},
        )
    current = exc.value.extra["current"]
    assert current["instructions"]["effective"] == "Mine."
    assert current["last_change"]["by"] == "owner"
    assert current["version"] == 2
    assert overrides.effective_instructions(Agent.objects.get(pk=code_agent.pk)) == "Mine."


def test_an_unchanged_save_records_nothing(code_agent, editor):
    revisions.override_save(
        lock_id=None, agent=code_agent, user=editor, version=1, data={"instructions": "A."}
    )
    result = revisions.override_save(
        lock_id=None, agent=code_agent, user=editor, version=2, data={"instructions": "A."}
    )
    assert result.revision is None
    assert Agent.objects.get(pk=code_agent.pk).version == 2
    assert Revision.objects.filter(agent=code_agent).count() == 1


def test_the_override_is_applied_at_run_time_and_survives_a_change_in_code(code_agent, editor):
    revisions.override_save(
        lock_id=None,
        agent=code_agent,
        user=editor,
        version=1,
        data={"instructions": "Overridden.", "tool_descriptions": {"lookup": "Edited lookup."}},
    )
    sync(
        definition(instructions="Code changed its instructions.", tools={"lookup": LOOKUP})
    )  # convert removed in code
    agent = Agent.objects.get(pk=code_agent.pk)
    assert agent.instructions == "Code changed its instructions."
    assert overrides.effective_instructions(agent) == "Overridden."
    assert [b.key for b in overrides.effective_tool_bindings(agent)] == ["lookup"]
    assert overrides.effective_tool_description(_binding(agent, "lookup")) == "Edited lookup."


@pytest.mark.parametrize("overridden", [True, False])
def test_a_run_reads_its_agent_and_the_override_in_two_queries(
    code_agent, editor, overridden, django_assert_num_queries
):
    """The run, its agent, the agent's override and whether it has sub-agents in one query;
    then its tool bindings (its sub-agent bindings only when it has some): the same count
    with an override and without."""
    from agents_core.models import Run, Thread
    from agents_core.runtime.run.setup import load_setup

    if overridden:
        revisions.override_save(
            lock_id=None,
            agent=code_agent,
            user=editor,
            version=1,
            data={"instructions": "Overridden.", "tool_descriptions": {"lookup": "Edited lookup."}},
        )
    thread = Thread.objects.create(agent=code_agent, owner=editor, resource_id="r")
    run = Run.objects.create(thread=thread, agent=code_agent, started_by=editor)
    with django_assert_num_queries(2):
        setup = load_setup(run.id)
    assert setup.instructions == ("Overridden." if overridden else INSTRUCTIONS)
    assert (setup.specs["lookup"].description == "Edited lookup.") is overridden


def test_a_policy_tightened_in_code_makes_the_run_ignore_old_overrides(code_agent, editor):
    revisions.override_save(
        lock_id=None,
        agent=code_agent,
        user=editor,
        version=1,
        data={"instructions": "Overridden.", "tools_removed": ["convert"]},
    )
    sync(definition(editor=False))
    agent = Agent.objects.get(pk=code_agent.pk)
    assert overrides.effective_instructions(agent) == INSTRUCTIONS
    assert {b.key for b in overrides.effective_tool_bindings(agent)} == {"lookup", "convert"}


def test_tool_membership_overrides_remove_and_add_tools(code_agent_factory, editor):
    agent = code_agent_factory(editor={"tools": True})
    revisions.override_save(
        lock_id=None,
        agent=agent,
        user=editor,
        version=1,
        data={
            "tools_removed": ["convert"],
            "tools_added": {"extra": EXTRA.id},
            "tool_descriptions": {"extra": "Use it for extras."},
        },
    )
    bindings = overrides.effective_tool_bindings(Agent.objects.get(pk=agent.pk))
    assert [b.key for b in bindings] == ["lookup", "extra"]
    assert overrides.effective_tool_description(bindings[1]) == "Use it for extras."


def test_membership_keys_are_checked(code_agent_factory, editor):
    agent = code_agent_factory(editor={"tools": True})
    with pytest.raises(ApplicationError):
        revisions.override_save(
            lock_id=None, agent=agent, user=editor, version=1, data={"tools_removed": ["nope"]}
        )
    with pytest.raises(ApplicationError):
        revisions.override_save(
            lock_id=None,
            agent=agent,
            user=editor,
            version=1,
            data={"tools_added": {"lookup": EXTRA.id}},
        )
    with pytest.raises(ApplicationError):
        revisions.override_save(
            lock_id=None,
            agent=agent,
            user=editor,
            version=1,
            data={"tool_descriptions": {"ghost": "x"}},
        )


def test_reset_to_code_drops_one_override_as_a_new_revision(code_agent, editor):
    revisions.override_save(
        lock_id=None,
        agent=code_agent,
        user=editor,
        version=1,
        data={"instructions": "X.", "tool_descriptions": {"lookup": "L", "convert": "C"}},
    )
    revisions.override_reset(
        lock_id=None,
        agent=code_agent,
        user=editor,
        field="tool_descriptions",
        key="lookup",
        version=2,
    )
    result = revisions.override_reset(
        lock_id=None, agent=code_agent, user=editor, field="instructions", version=3
    )
    assert result.revision.kind == "reset"
    doc = documents.editor_document(result.agent)
    assert doc["instructions"] is None
    assert doc["tool_descriptions"] == {"convert": "C"}
    assert overrides.effective_instructions(result.agent) == INSTRUCTIONS


def test_restore_is_a_new_version_checked_revision(code_agent, editor):
    first = revisions.override_save(
        lock_id=None, agent=code_agent, user=editor, version=1, data={"instructions": "First."}
    )
    revisions.override_save(
        lock_id=None, agent=code_agent, user=editor, version=2, data={"instructions": "Second."}
    )
    with pytest.raises(Conflict):
        revisions.revision_restore(lock_id=None, revision=first.revision, user=editor, version=2)
    restored = revisions.revision_restore(
        lock_id=None, revision=first.revision, user=editor, version=3
    )
    assert restored.revision.kind == "restore"
    assert restored.revision.version == 4
    assert restored.revision.restored_from == first.revision
    assert restored.revision.before["instructions"] == "Second."
    assert overrides.effective_instructions(restored.agent) == "First."


def test_a_user_without_the_change_permission_cannot_edit_a_code_agent(code_agent, outsider):
    with pytest.raises(permissions.Forbidden):
        revisions.override_save(
            lock_id=None, agent=code_agent, user=outsider, version=1, data={"instructions": "x"}
        )


def test_a_studio_agent_is_fully_editable_by_its_owner_only(code_agent, owner, outsider):
    agent = Agent.objects.create(
        slug="mine", name="Mine", model="studio/scripted", instructions="Old.", owner=owner
    )
    result = revisions.override_save(
        lock_id=None,
        agent=agent,
        user=owner,
        version=1,
        data={
            "name": "Mine 2",
            "model": "openai/gpt-4o",
            "instructions": "New.",
            "tools": {"extra": EXTRA.id},
            "tool_descriptions": {"extra": "Desc."},
            "id": "x",
        },
    )
    assert result.stripped == ["id"]
    agent.refresh_from_db()
    assert (agent.slug, agent.name, agent.model, agent.instructions) == (
        "mine",
        "Mine 2",
        "openai/gpt-4o",
        "New.",
    )
    binding = agent.tool_bindings.get()
    assert overrides.effective_tool_description(binding) == "Desc."
    with pytest.raises(permissions.Forbidden):
        revisions.override_save(
            lock_id=None, agent=agent, user=outsider, version=2, data={"name": "x"}
        )


def test_the_runs_setup_sees_the_override_and_not_code_owned_leftovers(code_agent_factory, editor):
    """Through the runtime's own loader (agents_core.runtime.run.setup), not just the module."""
    from agents_core.models import Run, Thread
    from agents_core.runtime.run.setup import load_setup

    agent = code_agent_factory(editor={"instructions": True, "tools": {"description": True}})
    revisions.override_save(
        lock_id=None,
        agent=agent,
        user=editor,
        version=1,
        data={
            "instructions": "Run with this.",
            "tool_descriptions": {"convert": "Convert it."},
            "tools_removed": ["lookup"],
        },  # stripped: the policy does not open membership
    )
    thread = Thread.objects.create(agent=agent, owner=editor, resource_id=str(editor.pk))
    run = Run.objects.create(thread=thread, agent=agent, started_by=editor)
    setup = load_setup(run.id)
    assert setup.instructions == "Run with this."
    assert set(setup.specs) == {"lookup", "convert"}
    assert setup.specs["convert"].description == "Convert it."
    assert setup.specs["lookup"].description == "Looks a word up."
