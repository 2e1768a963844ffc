"""Agent as tool: runs another agent to completion with the input as its prompt and
returns its answer, through the agent side's `run_agent` (tools_app.agent_side). A
sub-agent binding (`agent-<key>`) runs as a tool of this type too."""

from __future__ import annotations

import json
from typing import Any, ClassVar

from tools_app.types import ToolType

# What a sub-agent binding (`agent-<key>`) takes: the prompt alone.
PROMPT_SCHEMA = {
    "type": "object",
    "properties": {"prompt": {"type": "string", "description": "What to ask the agent."}},
    "required": ["prompt"],
    "additionalProperties": False,
}


def prompt_from(input: Any) -> str:  # noqa: A002
    if isinstance(input, dict) and isinstance(input.get("prompt"), str):
        return input["prompt"]
    return input if isinstance(input, str) else json.dumps(input)


class AgentToolType(ToolType):
    kind = "agent"
    label = "Agent as tool"
    config_schema: ClassVar[dict[str, Any]] = {
        "type": "object",
        "properties": {
            "agent": {"type": "string", "minLength": 1, "description": "The agent's slug."}
        },
        "required": ["agent"],
        "additionalProperties": False,
    }

    async def execute(self, tool: Any, input: Any, context: Any) -> Any:  # noqa: A002
        from tools_app.errors import ToolError

        side = getattr(context, "side", None)
        if side is None:
            raise ToolError(
                "Agent-as-tool needs the agent runtime, which is not installed in this build."
            )
        return await side.run_agent(tool.config.get("agent", ""), prompt_from(input), context)


tool_type = AgentToolType()
