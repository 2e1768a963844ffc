"""What a run sees of an agent once editor overrides are applied.

This is the one place the run reads instructions, tool membership and tool descriptions
from. An override of a field that code owns (agents_core.editor.policy) is ignored here,
so a policy tightened in code takes effect at the next run even if old overrides remain
stored. These are synchronous ORM reads: call them from async code
through sync_to_async.
"""

from __future__ import annotations

from typing import Any

from agents_core.editor.policy import is_editable
from agents_core.models import Agent, AgentTool, EditorOverride, Source, SubAgent


def agent_override(agent: Agent) -> EditorOverride | None:
    """The stored override of a code agent (cached on the instance), or None."""
    if not agent.is_code:
        return None
    try:
        return agent.editor_override
    except EditorOverride.DoesNotExist:
        return None


def effective_instructions(agent: Agent) -> Any:
    override = agent_override(agent)
    if override is not None and override.instructions is not None:
        if is_editable(agent, "instructions"):
            return override.instructions
    return agent.instructions


def effective_tool_description(binding: AgentTool) -> str:
    override = agent_override(binding.agent)
    if override is not None and binding.key in override.tool_descriptions:
        if is_editable(binding.agent, "tool_descriptions"):
            return override.tool_descriptions[binding.key]
    if binding.description_override and (
        not binding.agent.is_code or is_editable(binding.agent, "tool_descriptions")
    ):
        return binding.description_override
    return binding.tool.description


def effective_tool_bindings(agent: Agent) -> list[AgentTool]:
    """The agent's tool bindings after membership overrides.

    Tools an editor added to a code agent come back as unsaved AgentTool instances
    (pk None, source "studio"): they live in the override, not in the bindings table.
    """
    from tools_app.models import Tool

    bindings = list(agent.tool_bindings.select_related("tool").filter(tool__gone_at__isnull=True))
    if agent.is_code and not is_editable(agent, "tools"):
        # A binding added in the studio is a membership override too: the policy decides.
        return [binding for binding in bindings if binding.source == Source.CODE]
    override = agent_override(agent)
    if override is None:
        return bindings
    removed = set(override.tools_removed)
    kept = [binding for binding in bindings if binding.key not in removed]
    taken = {binding.key for binding in kept}
    wanted = {key: name for key, name in override.tools_added.items() if key not in taken}
    # An override names tools; only shared ones may join a code agent (documents.py), and
    # a studio agent's tools are its owner's: names are unique per owner.
    usable = Tool.objects.live().filter(name__in=wanted.values())
    usable = usable.filter(owner__isnull=True) if agent.is_code else usable.visible_to(agent.owner)
    tools = {tool.name: tool for tool in usable}
    position = max((binding.position for binding in kept), default=-1)
    for key, name in wanted.items():
        if name in tools:
            position += 1
            kept.append(
                AgentTool(
                    agent=agent, tool=tools[name], key=key, source="studio", position=position
                )
            )
    return kept


def effective_subagent_bindings(agent: Agent) -> list[SubAgent]:
    """The agent's sub-agent bindings under the editor policy. Sub-agents are tools to the
    model (`agent-<key>`): on a code agent whose policy keeps tool membership in code, the
    bindings added in the studio are ignored, as studio tool bindings are."""
    bindings = list(
        agent.subagent_bindings.select_related("child").filter(child__gone_at__isnull=True)
    )
    if agent.is_code and not is_editable(agent, "tools"):
        return [binding for binding in bindings if binding.source == Source.CODE]
    return bindings


def effective_subagent_description(binding: SubAgent) -> str:
    parent = binding.parent
    if binding.description_override and (
        not parent.is_code
        or binding.source == Source.CODE
        or is_editable(parent, "tool_descriptions")
    ):
        return binding.description_override
    return binding.child.description or binding.child.name
