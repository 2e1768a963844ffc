"""Writes of agents made in the studio and of the tool and sub-agent bindings of any agent.

Code agents are synced from code (agents_core.registry): their fields and their
code-owned bindings are read-only here. Studio bindings on a code agent are editor
overrides: the agent's `editor` policy and the change permission decide
(agents_core.editor.services.permissions.binding_write_check), and each change commits
through the editor (agents_core.editor.services.revisions.tracked_change) as a revision.
Saves of studio agents are revisions too, version-checked when the client names a version.
Every write names the edit lock session it comes from (`lock_id`) and is refused (423)
while another session holds the agent's live lock.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any, TypeVar

from django.core.exceptions import ValidationError
from django.db import IntegrityError, transaction
from django.db.models import Manager, Max

from agents_core.editor.services.locks import lock_guard
from agents_core.editor.services.permissions import binding_write_check
from agents_core.editor.services.revisions import tracked_change
from agents_core.models import Agent, AgentTool, Source, SubAgent
from agents_core.services.binding_rules import (
    bindable_tool,
    check_key_free,
    check_no_cycle,
    check_subagent_key_free,
    subagent_child,
)
from studio.exceptions import ApplicationError

AGENT_FIELDS = (
    "name",
    "description",
    "model",
    "instructions",
    "metadata",
    "default_options",
    "notification_policy",
)
# Binding fields -> the editor policy field a change of them needs on a code agent.
BINDING_POLICY_FIELDS = {
    "tool": "tools",
    "agent": "tools",
    "key": "tools",
    "requires_approval": "tools",
    "position": "tools",
    "description_override": "tool_descriptions",
}
T = TypeVar("T")


def _defined_in_code(what: str) -> ApplicationError:
    return ApplicationError(
        f"{what} is defined in code; edit its overrides instead.",
        status_code=403,
        code="defined_in_code",
    )


def agent_ensure_editable(agent: Agent) -> None:
    if agent.source == Source.CODE:
        raise _defined_in_code(f"Agent {agent.slug!r}")


def binding_ensure_editable(binding: AgentTool | SubAgent) -> None:
    if binding.source == Source.CODE:
        raise _defined_in_code(f"Binding {binding.key!r}")


def _save_or_field_error(instance: Any, field: str, message: str, **save_kwargs: Any) -> None:
    """Save in a savepoint; a unique constraint lost to a concurrent request becomes the
    same field error the up-front check gives."""
    try:
        with transaction.atomic():
            instance.save(**save_kwargs)
    except IntegrityError as exc:
        raise ValidationError({field: message}) from exc


# --- agents ---------------------------------------------------------------------------------
def slug_taken(slug: str) -> str:
    return f"An agent with the slug {slug!r} already exists; pick another one."


@transaction.atomic
def agent_create(*, owner: Any, slug: str, name: str, **fields: Any) -> Agent:
    unknown = set(fields) - set(AGENT_FIELDS)
    if unknown:
        raise TypeError(f"agent_create() got unexpected fields {sorted(unknown)}")
    if Agent.objects.filter(slug=slug).exists():
        raise ValidationError({"slug": slug_taken(slug)})
    agent = Agent(slug=slug, name=name, owner=owner, source=Source.STUDIO, **fields)
    _save_or_field_error(agent, "slug", slug_taken(slug), force_insert=True)
    return agent


def agent_update(
    *,
    agent: Agent,
    user: Any,
    data: dict[str, Any],
    lock_id: int | None,
    version: int | None = None,
) -> Agent:
    """Apply the given fields (a PUT sends all of them, a PATCH some) as an editor save.

    With `version` (the one the client started from) a stale save raises Conflict (409)
    and nothing is written; without it the save is accepted. Either way the version is
    bumped and a revision records who changed which fields, before and after; a save that
    changes nothing records nothing and keeps the version.
    """
    agent_ensure_editable(agent)
    data = {field: value for field, value in data.items() if field != "slug"}
    for field in data:
        if field not in AGENT_FIELDS:
            raise TypeError(f"agent_update() cannot set {field!r}")

    def apply() -> None:
        # Only the sent fields: the version was bumped by the editor's checked UPDATE.
        if data:
            Agent.objects.filter(pk=agent.pk).update(**data)

    return tracked_change(
        agent=agent, user=user, version=version, lock_id=lock_id, apply=apply
    ).agent


@transaction.atomic
def agent_delete(*, agent: Agent) -> None:
    """Delete a studio agent with its threads, runs and bindings."""
    agent_ensure_editable(agent)
    agent.delete()


def _binding_write(
    *,
    agent: Agent,
    user: Any,
    fields: Iterable[str],
    write: Callable[[], T],
    lock_id: int | None,
) -> T:
    """Run a binding write; refused (423) while another session holds the agent's edit lock.

    On a code agent it is an editor override: the policy and the change permission decide,
    and the write is recorded as a revision of the agent."""
    if agent.source != Source.CODE:
        lock_guard(agent=agent, user=user, lock_id=lock_id)
        return write()
    binding_write_check(user=user, agent=agent, fields={BINDING_POLICY_FIELDS[f] for f in fields})
    done: list[T] = []
    tracked_change(agent=agent, user=user, lock_id=lock_id, apply=lambda: done.append(write()))
    return done[0]


def _changed_fields(binding: AgentTool | SubAgent, data: dict[str, Any]) -> list[str]:
    current = {
        "tool": getattr(getattr(binding, "tool", None), "name", None),
        "agent": getattr(getattr(binding, "child", None), "slug", None),
        "key": binding.key,
        "requires_approval": getattr(binding, "requires_approval", None),
        "position": binding.position,
        "description_override": binding.description_override,
    }
    return [field for field, value in data.items() if current.get(field) != value]


# --- tool bindings --------------------------------------------------------------------------
def _next_position(bindings: Manager[Any]) -> int:
    top = bindings.aggregate(top=Max("position"))["top"]
    return 0 if top is None else top + 1


@transaction.atomic
def binding_create(
    *,
    agent: Agent,
    user: Any,
    tool: str,
    key: str | None = None,
    description_override: str = "",
    requires_approval: bool = False,
    position: int | None = None,
    lock_id: int | None,
) -> AgentTool:
    """Bind a tool (by name) to an agent; the binding is studio-owned, also on code agents."""
    fields = ["tool", "description_override"] if description_override else ["tool"]
    return _binding_write(
        agent=agent,
        user=user,
        fields=fields,
        lock_id=lock_id,
        write=lambda: _binding_create(
            agent=agent,
            user=user,
            tool=tool,
            key=key,
            description_override=description_override,
            requires_approval=requires_approval,
            position=position,
        ),
    )


def _binding_create(
    *,
    agent: Agent,
    user: Any,
    tool: str,
    key: str | None,
    description_override: str,
    requires_approval: bool,
    position: int | None,
) -> AgentTool:
    tool_row = bindable_tool(agent=agent, user=user, name=tool)
    key = key or tool_row.name
    check_key_free(agent, key)
    binding = AgentTool(
        agent=agent,
        tool=tool_row,
        key=key,
        description_override=description_override,
        requires_approval=requires_approval,
        source=Source.STUDIO,
        position=_next_position(agent.tool_bindings) if position is None else position,
    )
    _save_or_field_error(binding, "key", f"The agent already has a tool with the key {key!r}.")
    return binding


@transaction.atomic
def binding_update(
    *, binding: AgentTool, user: Any, data: dict[str, Any], lock_id: int | None
) -> AgentTool:
    binding_ensure_editable(binding)
    return _binding_write(
        agent=binding.agent,
        user=user,
        lock_id=lock_id,
        fields=_changed_fields(binding, data),
        write=lambda: _binding_update(binding=binding, user=user, data=data),
    )


def _binding_update(*, binding: AgentTool, user: Any, data: dict[str, Any]) -> AgentTool:
    if "tool" in data:
        binding.tool = bindable_tool(agent=binding.agent, user=user, name=data["tool"])
    if "key" in data and data["key"] != binding.key:
        check_key_free(binding.agent, data["key"], exclude_pk=binding.pk)
        binding.key = data["key"]
    for field in ("description_override", "requires_approval", "position"):
        if field in data:
            setattr(binding, field, data[field])
    _save_or_field_error(
        binding, "key", f"The agent already has a tool with the key {binding.key!r}."
    )
    return binding


@transaction.atomic
def binding_delete(*, binding: AgentTool, user: Any, lock_id: int | None) -> None:
    binding_ensure_editable(binding)
    _binding_write(
        agent=binding.agent, user=user, fields=["tool"], write=binding.delete, lock_id=lock_id
    )


# --- sub-agent bindings ---------------------------------------------------------------------
@transaction.atomic
def subagent_create(
    *,
    parent: Agent,
    user: Any,
    agent: str,
    key: str | None = None,
    description_override: str = "",
    position: int | None = None,
    lock_id: int | None,
) -> SubAgent:
    """Bind another agent (by slug) as a sub-agent; the model sees it as `agent-<key>`."""
    fields = ["agent", "description_override"] if description_override else ["agent"]
    return _binding_write(
        agent=parent,
        user=user,
        fields=fields,
        lock_id=lock_id,
        write=lambda: _subagent_create(
            parent=parent,
            user=user,
            agent=agent,
            key=key,
            description_override=description_override,
            position=position,
        ),
    )


def _subagent_create(
    *,
    parent: Agent,
    user: Any,
    agent: str,
    key: str | None,
    description_override: str,
    position: int | None,
) -> SubAgent:
    child = subagent_child(parent=parent, user=user, slug=agent)
    key = key or child.slug
    check_subagent_key_free(parent, key)
    check_no_cycle(parent, child)
    binding = SubAgent(
        parent=parent,
        child=child,
        key=key,
        description_override=description_override,
        source=Source.STUDIO,
        position=_next_position(parent.subagent_bindings) if position is None else position,
    )
    _save_or_field_error(binding, "key", f"The agent already has a sub-agent with the key {key!r}.")
    return binding


@transaction.atomic
def subagent_update(
    *, binding: SubAgent, user: Any, data: dict[str, Any], lock_id: int | None
) -> SubAgent:
    binding_ensure_editable(binding)
    return _binding_write(
        agent=binding.parent,
        user=user,
        lock_id=lock_id,
        fields=_changed_fields(binding, data),
        write=lambda: _subagent_update(binding=binding, user=user, data=data),
    )


def _subagent_update(*, binding: SubAgent, user: Any, data: dict[str, Any]) -> SubAgent:
    if "agent" in data and data["agent"] != binding.child.slug:
        child = subagent_child(parent=binding.parent, user=user, slug=data["agent"])
        check_no_cycle(binding.parent, child)
        binding.child = child
    if "key" in data and data["key"] != binding.key:
        check_subagent_key_free(binding.parent, data["key"], exclude_pk=binding.pk)
        binding.key = data["key"]
    for field in ("description_override", "position"):
        if field in data:
            setattr(binding, field, data[field])
    _save_or_field_error(
        binding, "key", f"The agent already has a sub-agent with the key {binding.key!r}."
    )
    return binding


@transaction.atomic
def subagent_delete(*, binding: SubAgent, user: Any, lock_id: int | None) -> None:
    binding_ensure_editable(binding)
    _binding_write(
        agent=binding.parent, user=user, fields=["agent"], write=binding.delete, lock_id=lock_id
    )
