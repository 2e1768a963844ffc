"""Writes of agents made in the studio and of the tool and sub-agent bindings of any agent.

Code agents are synced from code (agents_core.registry): their fields and their
code-owned bindings are read-only here. Studio bindings on a code agent are editor
overrides: the agent's `editor` policy and the change permission decide
(agents_core.editor.services.binding_write_check), and each change is an editor revision.
Saves of studio agents are revisions too, version-checked when the client names a version.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any, TypeVar

from django.core.exceptions import ValidationError
from django.db import IntegrityError, connection, transaction
from django.db.models import Max

from agents_core.editor.services import binding_write_check, tracked_change
from agents_core.models import Agent, AgentTool, Source, SubAgent
from studio.exceptions import ApplicationError
from tools_app.selectors import tool_get

AGENT_FIELDS = (
    "name",
    "description",
    "model",
    "instructions",
    "metadata",
    "default_options",
    "notification_policy",
)
SUBAGENT_PREFIX = "agent-"
# Any fixed number: the lock that serialises changes of the sub-agent graph (PostgreSQL).
SUBAGENT_GRAPH_LOCK = 0x5E_A6E7
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
def _slug_taken(slug: str) -> str:
    return f"An agent with the slug {slug!r} already exists; pick another one."


@transaction.atomic
def agent_create(*, owner: Any, slug: str, name: str, **fields: Any) -> Agent:
    unknown = set(fields) - set(AGENT_FIELDS)
    if unknown:
        raise TypeError(f"agent_create() got unexpected fields {sorted(unknown)}")
    if Agent.objects.filter(slug=slug).exists():
        raise ValidationError({"slug": _slug_taken(slug)})
    agent = Agent(slug=slug, name=name, owner=owner, source=Source.STUDIO, **fields)
    _save_or_field_error(agent, "slug", _slug_taken(slug), force_insert=True)
    return agent


def agent_update(
    *, agent: Agent, user: Any, data: dict[str, Any], version: int | None = None
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

    return tracked_change(agent=agent, user=user, version=version, apply=apply).agent


@transaction.atomic
def agent_delete(*, agent: Agent) -> None:
    """Delete a studio agent with its threads, runs and bindings."""
    agent_ensure_editable(agent)
    agent.delete()


def _binding_write(*, agent: Agent, user: Any, fields: Iterable[str], write: Callable[[], T]) -> T:
    """Run a binding write. On a code agent it is an editor override: the policy and the
    change permission decide, and the write is recorded as a revision of the agent."""
    if agent.source != Source.CODE:
        return write()
    binding_write_check(user=user, agent=agent, fields={BINDING_POLICY_FIELDS[f] for f in fields})
    done: list[T] = []
    tracked_change(agent=agent, user=user, apply=lambda: done.append(write()))
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
def _check_key_free(
    agent: Agent, key: str, *, field: str = "key", exclude_pk: int | None = None
) -> None:
    """A tool key must be unique on the agent, also against sub-agents' `agent-<key>`."""
    taken = AgentTool.objects.filter(agent=agent, key=key).exclude(pk=exclude_pk).exists()
    if taken:
        raise ValidationError({field: f"The agent already has a tool with the key {key!r}."})
    if (
        key.startswith(SUBAGENT_PREFIX)
        and SubAgent.objects.filter(parent=agent, key=key.removeprefix(SUBAGENT_PREFIX)).exists()
    ):
        raise ValidationError(
            {field: f"{key!r} is the tool name of one of the agent's sub-agents."}
        )


def _next_position(bindings: Iterable[Any]) -> int:
    top = bindings.aggregate(top=Max("position"))["top"]  # type: ignore[attr-defined]
    return 0 if top is None else top + 1


def _bindable_tool(*, agent: Agent, user: Any, name: str) -> Any:
    # The selector only sees the user's own tools and shared code/system tools: another
    # user's tool reads as missing, so its name is not revealed either.
    tool = tool_get(user=user, name=name)
    if tool is None:
        raise ValidationError({"tool": f"No tool named {name!r} that you can use."})
    if agent.source == Source.CODE and tool.source != Source.CODE:
        # Everyone runs a code agent: a private tool (and its credentials) bound to it
        # would run for, and show to, every other user.
        raise ValidationError(
            {
                "tool": f"Agent {agent.slug!r} is shared by everyone (defined in code), so "
                f"only shared tools can be added to it; add {name!r} to your own agents."
            }
        )
    return tool


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
) -> AgentTool:
    """Bind a tool (by name) to an agent; the binding is studio-owned, also on code agents."""
    fields = ["tool", "description_override"] if description_override else ["tool"]
    return _binding_write(
        agent=agent,
        user=user,
        fields=fields,
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
    tool_row = _bindable_tool(agent=agent, user=user, name=tool)
    key = key or tool_row.name
    _check_key_free(agent, key)
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
def binding_update(*, binding: AgentTool, user: Any, data: dict[str, Any]) -> AgentTool:
    binding_ensure_editable(binding)
    return _binding_write(
        agent=binding.agent,
        user=user,
        fields=_changed_fields(binding, data),
        write=lambda: _binding_update(binding=binding, user=user, data=data),
    )


def _binding_update(*, binding: AgentTool, user: Any, data: dict[str, Any]) -> AgentTool:
    if "tool" in data:
        binding.tool = _bindable_tool(agent=binding.agent, user=user, name=data["tool"])
    if "key" in data and data["key"] != binding.key:
        _check_key_free(binding.agent, data["key"], exclude_pk=binding.pk)
        binding.key = data["key"]
    for field in ("description_override", "requires_approval", "position"):
        if field in data:
            setattr(binding, field, data[field])
    _save_or_field_error(
        binding, "key", f"The agent already has a tool with the key {binding.key!r}."
    )
    return binding


@transaction.atomic
def binding_delete(*, binding: AgentTool, user: Any) -> None:
    binding_ensure_editable(binding)
    _binding_write(agent=binding.agent, user=user, fields=["tool"], write=binding.delete)


# --- sub-agent bindings ---------------------------------------------------------------------
def _check_subagent_key_free(parent: Agent, key: str, *, exclude_pk: int | None = None) -> None:
    if SubAgent.objects.filter(parent=parent, key=key).exclude(pk=exclude_pk).exists():
        raise ValidationError({"key": f"The agent already has a sub-agent with the key {key!r}."})
    if AgentTool.objects.filter(agent=parent, key=f"{SUBAGENT_PREFIX}{key}").exists():
        raise ValidationError(
            {"key": f"The agent already has a tool with the key '{SUBAGENT_PREFIX}{key}'."}
        )


def subagent_path(start: Agent, goal: Agent) -> list[int] | None:
    """Agent ids along sub-agent bindings from start to goal, or None if goal is unreachable."""
    came_from: dict[int, int | None] = {start.pk: None}
    frontier = [start.pk]
    while frontier:
        if goal.pk in came_from:
            break
        edges = SubAgent.objects.filter(parent_id__in=frontier).values_list("parent_id", "child_id")
        frontier = []
        for parent_id, child_id in edges:
            if child_id not in came_from:
                came_from[child_id] = parent_id
                frontier.append(child_id)
    if goal.pk not in came_from:
        return None
    path, node = [], goal.pk
    while node is not None:
        path.append(node)
        node = came_from[node]
    return path[::-1]


def _check_no_cycle(parent: Agent, child: Agent) -> None:
    if parent.pk == child.pk:
        raise ValidationError({"agent": "An agent cannot be its own sub-agent."})
    if connection.vendor == "postgresql":
        # Two concurrent requests (A gets B, B gets A) would each see no cycle; one lock
        # for all changes of the graph makes the second one see the first.
        with connection.cursor() as cursor:
            cursor.execute("SELECT pg_advisory_xact_lock(%s)", [SUBAGENT_GRAPH_LOCK])
    path = subagent_path(child, parent)
    if path is not None:
        slugs = dict(Agent.objects.filter(pk__in=path).values_list("pk", "slug"))
        loop = " → ".join([parent.slug, *(slugs[pk] for pk in path)])
        raise ValidationError(
            {
                "agent": f"{child.slug!r} cannot be a sub-agent of {parent.slug!r}: "
                f"that would make a cycle ({loop})."
            }
        )


def _subagent_child(*, parent: Agent, user: Any, slug: str) -> Agent:
    from agents_core.selectors import agent_get

    child = agent_get(user=user, slug=slug)
    if child is None:
        raise ValidationError({"agent": f"No agent with the slug {slug!r} that you can use."})
    if parent.source == Source.CODE and child.source != Source.CODE:
        # As with tools: everyone runs a code agent, so its sub-agents must be shared too.
        raise ValidationError(
            {
                "agent": f"Agent {parent.slug!r} is shared by everyone (defined in code), so "
                "only shared (code) agents can be its sub-agents."
            }
        )
    return child


@transaction.atomic
def subagent_create(
    *,
    parent: Agent,
    user: Any,
    agent: str,
    key: str | None = None,
    description_override: str = "",
    position: int | None = None,
) -> SubAgent:
    """Bind another agent (by slug) as a sub-agent; the model sees it as `agent-<key>`."""
    fields = ["agent", "description_override"] if description_override else ["agent"]
    return _binding_write(
        agent=parent,
        user=user,
        fields=fields,
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
    child = _subagent_child(parent=parent, user=user, slug=agent)
    key = key or child.slug
    _check_subagent_key_free(parent, key)
    _check_no_cycle(parent, child)
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
def subagent_update(*, binding: SubAgent, user: Any, data: dict[str, Any]) -> SubAgent:
    binding_ensure_editable(binding)
    return _binding_write(
        agent=binding.parent,
        user=user,
        fields=_changed_fields(binding, data),
        write=lambda: _subagent_update(binding=binding, user=user, data=data),
    )


def _subagent_update(*, binding: SubAgent, user: Any, data: dict[str, Any]) -> SubAgent:
    if "agent" in data and data["agent"] != binding.child.slug:
        child = _subagent_child(parent=binding.parent, user=user, slug=data["agent"])
        _check_no_cycle(binding.parent, child)
        binding.child = child
    if "key" in data and data["key"] != binding.key:
        _check_subagent_key_free(binding.parent, data["key"], exclude_pk=binding.pk)
        binding.key = data["key"]
    for field in ("description_override", "position"):
        if field in data:
            setattr(binding, field, data[field])
    _save_or_field_error(
        binding, "key", f"The agent already has a sub-agent with the key {binding.key!r}."
    )
    return binding


@transaction.atomic
def subagent_delete(*, binding: SubAgent, user: Any) -> None:
    binding_ensure_editable(binding)
    _binding_write(agent=binding.parent, user=user, fields=["agent"], write=binding.delete)


# --- restoring what a revision recorded beside the editor document ---------------------------
def recorded_parts_restore(*, agent: Agent, user: Any, recorded: dict[str, Any]) -> None:
    """Make the parts of an agent that a revision records beside its editor document what
    they were (agents_core.editor.services.revision_document): a code agent's studio
    bindings (tools and sub-agents added through the REST API), a studio agent's settings.

    Runs inside the restore's transaction: a tool or agent that can no longer be bound
    refuses the whole restore (400) with the reason, nothing half-written."""
    if agent.source != Source.CODE:
        fields = {name: recorded[name] for name in AGENT_FIELDS if name in recorded}
        if fields:
            Agent.objects.filter(pk=agent.pk).update(**fields)
        return
    if "studio_tools" in recorded:
        _restore_studio_tools(agent, user, recorded["studio_tools"])
    if "studio_subagents" in recorded:
        _restore_studio_subagents(agent, user, recorded["studio_subagents"])


def _restore_bindings(
    rows: Any,
    wanted: dict[str, dict[str, Any]],
    make: Callable[[str], Any],
    fill: Callable[[Any, dict], None],
) -> None:
    """Make the studio bindings `rows` exactly `wanted` ({key: recorded fields})."""
    rows.exclude(key__in=list(wanted)).delete()
    current = {binding.key: binding for binding in rows}
    for key, spec in wanted.items():
        binding = current.get(key) or make(key)
        fill(binding, spec)
        binding.position = spec.get("position", 0)
        binding.description_override = spec.get("description") or ""
        binding.save()


def _restore_studio_tools(agent: Agent, user: Any, wanted: dict[str, dict[str, Any]]) -> None:
    def make(key: str) -> AgentTool:
        _check_key_free(agent, key, field="tool")
        return AgentTool(agent=agent, key=key, source=Source.STUDIO)

    def fill(binding: AgentTool, spec: dict[str, Any]) -> None:
        binding.tool = _bindable_tool(agent=agent, user=user, name=spec["tool"])
        binding.requires_approval = bool(spec.get("requires_approval"))

    _restore_bindings(
        AgentTool.objects.filter(agent=agent, source=Source.STUDIO), wanted, make, fill
    )


def _restore_studio_subagents(agent: Agent, user: Any, wanted: dict[str, dict[str, Any]]) -> None:
    def make(key: str) -> SubAgent:
        _check_subagent_key_free(agent, key)
        return SubAgent(parent=agent, key=key, source=Source.STUDIO)

    def fill(binding: SubAgent, spec: dict[str, Any]) -> None:
        child = _subagent_child(parent=agent, user=user, slug=spec["agent"])
        if binding.child_id != child.pk:
            _check_no_cycle(agent, child)
        binding.child = child

    _restore_bindings(
        SubAgent.objects.filter(parent=agent, source=Source.STUDIO), wanted, make, fill
    )
