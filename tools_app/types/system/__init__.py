"""Built-in system tools (web_fetch, web_search, ask_user, submit_plan here; the task_*
tools live with the runtime). They are code definitions of kind "system"
(tools_app.types.system.tools, imported by tools_app.tools so the registry syncs them),
executed like code tools."""

from __future__ import annotations

from typing import Any, ClassVar

from tools_app.types import ToolType
from tools_app.types.code import execute_definition


class SystemToolType(ToolType):
    kind = "system"
    label = "Built-in system tool"
    creatable: ClassVar[bool] = False
    config_schema: ClassVar[dict[str, Any]] = {
        "type": "object",
        "description": "Built-in tools are configured by the studio; nothing to set here.",
    }

    async def execute(self, tool: Any, input: Any, context: Any) -> Any:  # noqa: A002
        return await execute_definition(tool, input, context)


tool_type = SystemToolType()
