"""The checks every binding write makes (keys, usable tools and sub-agents, no cycles),
and the restore of what a revision recorded beside an agent's editor document.

Both the binding writes (agents_core.services.agents) and the editor's restore
(agents_core.editor.services.revisions) use them; this module imports neither.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from django.core.exceptions import ValidationError
from django.db import connection
from django.db.models import QuerySet

from agents_core.editor.services.documents import STUDIO_RECORDED_FIELDS
from agents_core.models import Agent, AgentTool, Source, SubAgent
from agents_core.selectors import agent_get
from tools_app.selectors import tool_get

SUBAGENT_PREFIX = "agent-"
# Any fixed number: the lock that serialises changes of the sub-agent graph (PostgreSQL).
SUBAGENT_GRAPH_LOCK = 0x5E_A6E7


def _other_rows(rows: QuerySet[Any], exclude_pk: int | None) -> QuerySet[Any]:
    return rows if exclude_pk is None else rows.exclude(pk=exclude_pk)


def check_key_free(
    agent: Agent, key: str, *, field: str = "key", exclude_pk: int | None = None
) -> None:
    """A tool key must be unique on the agent, also against sub-agents' `agent-<key>`."""
    taken = _other_rows(AgentTool.objects.filter(agent=agent, key=key), exclude_pk).exists()
    if taken:
        raise ValidationError({field: f"The agent already has a tool with the key {key!r}."})
    if (
        key.startswith(SUBAGENT_PREFIX)
        and SubAgent.objects.filter(parent=agent, key=key.removeprefix(SUBAGENT_PREFIX)).exists()
    ):
        raise ValidationError(
            {field: f"{key!r} is the tool name of one of the agent's sub-agents."}
        )


def bindable_tool(*, agent: Agent, user: Any, name: str) -> Any:
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


# --- sub-agents ------------------------------------------------------------------------------
def check_subagent_key_free(parent: Agent, key: str, *, exclude_pk: int | None = None) -> None:
    if _other_rows(SubAgent.objects.filter(parent=parent, key=key), exclude_pk).exists():
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
    path: list[int] = []
    node: int | None = goal.pk
    while node is not None:
        path.append(node)
        node = came_from[node]
    return path[::-1]


def check_no_cycle(parent: Agent, child: Agent) -> None:
    if parent.pk == child.pk:
        raise ValidationError({"agent": "An agent cannot be its own sub-agent."})
    # Two concurrent requests (A gets B, B gets A) would each see no cycle; one lock for
    # all changes of the graph makes the second one see the first.
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


def subagent_child(*, parent: Agent, user: Any, slug: str) -> Agent:
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


# --- restoring what a revision recorded beside the editor document ---------------------------
def recorded_parts_restore(*, agent: Agent, user: Any, recorded: dict[str, Any]) -> None:
    """Make the parts of an agent that a revision records beside its editor document what
    they were (agents_core.editor.services.documents.revision_document): a code agent's studio
    bindings (tools and sub-agents added through the REST API), a studio agent's settings.

    Runs inside the restore's transaction: a tool or agent that can no longer be bound
    refuses the whole restore (400) with the reason, nothing half-written."""
    if agent.source != Source.CODE:
        fields = {name: recorded[name] for name in STUDIO_RECORDED_FIELDS if name in recorded}
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
        check_key_free(agent, key, field="tool")
        return AgentTool(agent=agent, key=key, source=Source.STUDIO)

    def fill(binding: AgentTool, spec: dict[str, Any]) -> None:
        binding.tool = bindable_tool(agent=agent, user=user, name=spec["tool"])
        binding.requires_approval = bool(spec.get("requires_approval"))

    _restore_bindings(
        AgentTool.objects.filter(agent=agent, source=Source.STUDIO), wanted, make, fill
    )


def _restore_studio_subagents(agent: Agent, user: Any, wanted: dict[str, dict[str, Any]]) -> None:
    def make(key: str) -> SubAgent:
        check_subagent_key_free(agent, key)
        return SubAgent(parent=agent, key=key, source=Source.STUDIO)

    def fill(binding: SubAgent, spec: dict[str, Any]) -> None:
        child = subagent_child(parent=agent, user=user, slug=spec["agent"])
        if binding.child_id != child.pk:
            check_no_cycle(agent, child)
        binding.child = child

    _restore_bindings(
        SubAgent.objects.filter(parent=agent, source=Source.STUDIO), wanted, make, fill
    )
