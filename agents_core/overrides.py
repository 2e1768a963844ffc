"""What a run sees of an agent once editor overrides are applied.

This is the one place the run reads instructions and tool descriptions from; the editor
feature (overrides, policy) plugs in here so that an override of a field that code owns
is ignored at run time too (DESIGN.md section 10).
"""

from __future__ import annotations

from typing import Any

from agents_core.models import Agent, AgentTool, SubAgent


def effective_instructions(agent: Agent) -> Any:
    return agent.instructions


def effective_tool_description(binding: AgentTool) -> str:
    return binding.description_override or binding.tool.description


def effective_subagent_description(binding: SubAgent) -> str:
    return binding.description_override or binding.child.description or binding.child.name
