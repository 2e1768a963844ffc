"""Tools defined in Python code (agents_core.definitions.create_tool): the registry's
ToolDefinition.execute(input, context) runs in the server process (it is the project's
own code, not user input). Sync callables run in a worker thread, async ones are awaited."""

from __future__ import annotations

from typing import Any, ClassVar

from tools_app.types import ToolType


def definition_for(tool: Any) -> Any:
    from agents_core.registry import get_tool_definition
    from tools_app.execution import ToolError

    definition = get_tool_definition(tool.name)
    if definition is None or tool.gone_at is not None:
        raise ToolError(
            f"The code of tool {tool.name!r} is not loaded in this process "
            "(removed from code, or its module is not installed)."
        )
    if definition.execute is None:
        raise ToolError(f"Tool {tool.name!r} has no execute function.")
    return definition


async def execute_definition(tool: Any, input: Any, context: Any) -> Any:  # noqa: A002
    from tools_app.execution import call_maybe_async

    definition = definition_for(tool)
    return await call_maybe_async(definition.execute, input, context)


class CodeToolType(ToolType):
    kind = "code"
    label = "Defined in Python code"
    creatable: ClassVar[bool] = False
    config_schema: ClassVar[dict[str, Any]] = {
        "type": "object",
        "description": "Code tools are configured in code (create_tool); nothing to set here.",
    }

    async def execute(self, tool: Any, input: Any, context: Any) -> Any:  # noqa: A002
        return await execute_definition(tool, input, context)


tool_type = CodeToolType()
