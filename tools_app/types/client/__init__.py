"""Client functions: declared in the studio, executed by the browser that runs the
preview chat. Inside an agent run the call suspends with {"kind": "client-function"};
the chat page runs the function and sends `client-tool-result`, which resumes the run.
From the test console, the API or the CLI there is no browser to run it: a clear error."""

from __future__ import annotations

from typing import Any, ClassVar

from tools_app.types import ToolType

CONSOLE_ERROR = (
    "Client functions run in the preview chat (in the browser); they cannot be executed "
    "from the console, the API or the CLI."
)


class ClientToolType(ToolType):
    kind = "client"
    label = "Client function (runs in the browser)"
    config_schema: ClassVar[dict[str, Any]] = {
        "type": "object",
        "properties": {
            "function": {
                "type": "string",
                "description": "Name of the function the preview chat page registers "
                "(defaults to the tool's name).",
            }
        },
        "additionalProperties": False,
    }

    async def execute(self, tool: Any, input: Any, context: Any) -> Any:  # noqa: A002
        from tools_app.errors import ToolError, ToolSuspended

        if context.resume_payload is not None:
            return context.resume_payload
        if context.run is None:
            raise ToolError(CONSOLE_ERROR)
        raise ToolSuspended(
            {
                "kind": "client-function",
                "tool": tool.name,
                "function": tool.config.get("function") or tool.name,
                "input": input,
            }
        )


tool_type = ClientToolType()
