"""MCP tools: one tool of a registered MCP server (tools_app.sources.mcp).

Tool.config = {"source_id", "remote_name"}; the server's URL, transport and encrypted
headers stay on the ToolSource so that one change of a header serves every tool. A server
that signs in with its own OAuth is called with the running user's token
(tools_app.sources.mcp_signin); a user who has not connected gets a tool error saying so.
The output is the call result: `structuredContent` when the tool declares an output
schema, else {"content": [...], "text": "..."}. An `isError` result, a protocol error or
an unreachable server is a tool error carrying the server's message.
"""

from __future__ import annotations

from typing import Any, ClassVar

from tools_app.types import ToolType


class McpToolType(ToolType):
    kind = "mcp"
    label = "MCP server tool"
    creatable = False  # exposed from a registered server on the sources page
    config_schema: ClassVar[dict[str, Any]] = {
        "type": "object",
        "required": ["source_id", "remote_name"],
        "properties": {"source_id": {"type": "integer"}, "remote_name": {"type": "string"}},
    }

    async def execute(self, tool: Any, input: Any, context: Any) -> Any:  # noqa: A002
        from asgiref.sync import sync_to_async

        from tools_app.errors import ToolError
        from tools_app.models import ToolSource
        from tools_app.sources.mcp import McpFailure, mcp_call, mcp_source_connection
        from tools_app.sources.mcp_signin import as_user, signs_in

        try:
            connection = await sync_to_async(mcp_source_connection)(tool)
        except ToolSource.DoesNotExist:
            raise ToolError("The MCP server of this tool was removed (or is not yours).") from None
        source = connection.pop("source")

        async def call(headers: dict[str, str]) -> dict[str, Any]:
            return await mcp_call(
                **{**connection, "headers": headers},
                name=tool.config["remote_name"],
                arguments=input or {},
                timeout=tool.timeout_seconds,
            )

        try:
            if signs_in(source):
                user = getattr(context, "user", None)
                result = await as_user(source, user, connection["headers"], call)
            else:
                result = await call(connection["headers"])
        except McpFailure as exc:
            raise ToolError(str(exc)) from None
        if result["isError"]:
            raise ToolError(result["text"] or "The MCP tool reported an error.", output=result)
        if tool.output_schema and result["structuredContent"] is not None:
            return result["structuredContent"]
        return {"content": result["content"], "text": result["text"]}


tool_type = McpToolType()
