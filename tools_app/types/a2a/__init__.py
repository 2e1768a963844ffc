"""A2A agent tools: an external agent reached by its agent card (tools_app.sources.a2a).

Tool.config = {"source_id"}; the card and the encrypted headers stay on the ToolSource.
Input {"message"}, output {"reply", "state", "task_id"}; a failed, canceled or rejected
task, an unreachable agent or a protocol error is a tool error with the agent's message.
"""

from __future__ import annotations

from typing import Any, ClassVar

from tools_app.types import ToolType


class A2AToolType(ToolType):
    kind = "a2a"
    label = "A2A agent"
    creatable = False  # added by its agent card URL on the sources page
    config_schema: ClassVar[dict[str, Any]] = {
        "type": "object",
        "required": ["source_id"],
        "properties": {"source_id": {"type": "integer"}},
    }

    async def execute(self, tool: Any, input: Any, context: Any) -> Any:  # noqa: A002
        from asgiref.sync import sync_to_async

        from tools_app.errors import ToolError
        from tools_app.models import ToolSource
        from tools_app.sources.a2a import A2AFailure, a2a_send, a2a_source_connection

        try:
            connection = await sync_to_async(a2a_source_connection)(tool)
        except ToolSource.DoesNotExist:
            raise ToolError("The A2A agent of this tool was removed (or is not yours).") from None
        try:
            return await a2a_send(**connection, text=input["message"], timeout=tool.timeout_seconds)
        except A2AFailure as exc:
            raise ToolError(str(exc)) from None


tool_type = A2AToolType()
