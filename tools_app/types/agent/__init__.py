"""Agent as tool: runs another agent to completion with the input as its prompt and
returns its answer, through the runtime's `agents_core.runtime.api.agent_generate`."""

from __future__ import annotations

import json
from typing import Any, ClassVar

from tools_app.types import ToolType

DEFAULT_INPUT_SCHEMA = {
    "type": "object",
    "properties": {"prompt": {"type": "string", "description": "What to ask the agent."}},
    "required": ["prompt"],
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
        from asgiref.sync import sync_to_async

        from tools_app.execution import ToolError

        try:
            from agents_core.runtime.api import agent_generate
        except ImportError:
            raise ToolError(
                "Agent-as-tool needs the agent runtime (agents_core.runtime.api."
                "agent_generate), which is not installed in this build."
            ) from None
        if not getattr(context.user, "is_authenticated", False):
            # The nested run and its thread belong to a user.
            raise ToolError(
                "Agent-as-tool runs on behalf of a signed-in user (from the CLI, pass --user)."
            )
        slug = tool.config.get("agent", "")
        agent = await sync_to_async(_agent_for)(slug, context.user)
        if agent is None:
            raise ToolError(f"No agent {slug!r} that this user can run.")
        text = await agent_generate(agent=agent, prompt=prompt_from(input), user=context.user)
        return text


def _agent_for(slug: str, user: Any) -> Any:
    from django.db.models import Q

    from agents_core.models import Agent, Source

    visible = Q(source=Source.CODE) | Q(owner=user)
    return Agent.objects.filter(visible, slug=slug, gone_at__isnull=True).first()


tool_type = AgentToolType()
