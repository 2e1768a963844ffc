"""The studio as an MCP server: a signed-in user's tools, listed and called over MCP
(streamable HTTP at /mcp/, token auth; see tools_app.sources.asgi).

Calls go through tools_app.execution.run_tool, so they are validated, time-limited and
recorded as ToolRuns like any other run. A failed run is an `isError` result carrying
the error and, when there is one, the tool's output.

Lifespan: the SDK's session manager must run inside a task group for as long as the
server lives, normally from the ASGI lifespan. Daphne sends no lifespan events, so the
manager is started by the first MCP request on the serving event loop and runs in a
background task of that loop until the process ends. The manager is stateless (every
POST is answered on its own, JSON responses): any worker process can answer any call.
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

from channels.db import database_sync_to_async

from tools_app.sources.asgi import guarded

SERVER_NAME = "agent-studio"
# Tools that cannot complete outside a browser page.
HIDDEN_KINDS = {"client"}


@database_sync_to_async
def _visible_tools(user: Any) -> list[Any]:
    from tools_app.selectors import tool_list

    # MCP tools take an object of arguments; a tool whose input is not one cannot be listed.
    return [
        tool
        for tool in tool_list(user=user).exclude(kind__in=HIDDEN_KINDS)
        if (tool.input_schema or {}).get("type", "object") == "object"
    ]


@database_sync_to_async
def _visible_tool(user: Any, name: str) -> Any:
    from tools_app.selectors import tool_get

    tool = tool_get(user=user, name=name)
    return None if tool is None or tool.kind in HIDDEN_KINDS else tool


def _user(ctx: Any) -> Any:
    return ctx.request.scope["studio_user"]


async def _list_tools(ctx: Any, params: Any) -> Any:
    import mcp_types as types

    tools = await _visible_tools(_user(ctx))
    return types.ListToolsResult(
        tools=[
            types.Tool(
                name=tool.name,
                description=tool.description or tool.name,
                input_schema=tool.input_schema or {"type": "object"},
                output_schema=tool.output_schema
                if (tool.output_schema or {}).get("type") == "object"
                else None,
            )
            for tool in tools
        ]
    )


async def _call_tool(ctx: Any, params: Any) -> Any:
    import mcp_types as types

    from tools_app.execution import ExecutionContext, run_tool

    user = _user(ctx)
    tool = await _visible_tool(user, params.name)
    if tool is None:
        return types.CallToolResult(
            is_error=True, content=[types.TextContent(text=f"No tool named {params.name!r}.")]
        )
    outcome = await run_tool(tool, params.arguments or {}, ExecutionContext(user=user, record=True))
    if outcome.ok:
        structured = outcome.output if isinstance(outcome.output, dict) else None
        return types.CallToolResult(
            content=[types.TextContent(text=json.dumps(outcome.model_output, ensure_ascii=False))],
            structured_content=structured if tool.output_schema else None,
        )
    detail = {"error": outcome.error, "errors": outcome.errors, "output": outcome.output}
    return types.CallToolResult(
        is_error=True,
        content=[
            types.TextContent(text=outcome.error or "The tool failed."),
            types.TextContent(text=json.dumps(detail, ensure_ascii=False, default=str)),
        ],
    )


class _Running:
    """One session manager per event loop, running in a background task of that loop."""

    def __init__(self) -> None:
        self.by_loop: dict[int, Any] = {}
        self.tasks: list[asyncio.Task] = []
        self.lock = asyncio.Lock()

    async def manager(self) -> Any:
        loop = asyncio.get_running_loop()
        manager = self.by_loop.get(id(loop))
        if manager is not None:
            return manager
        async with self.lock:
            if id(loop) not in self.by_loop:
                self.by_loop[id(loop)] = await self._start()
        return self.by_loop[id(loop)]

    async def _start(self) -> Any:
        from mcp.server import Server
        from mcp.server.streamable_http_manager import StreamableHTTPSessionManager

        server = Server(SERVER_NAME, on_list_tools=_list_tools, on_call_tool=_call_tool)
        manager = StreamableHTTPSessionManager(app=server, stateless=True, json_response=True)
        started = asyncio.Event()

        async def run() -> None:
            async with manager.run():
                started.set()
                await asyncio.Event().wait()  # until the loop (the process) ends

        # Keep a reference: a task only weakly held by the loop may be collected.
        self.tasks.append(asyncio.get_running_loop().create_task(run(), name="mcp-sessions"))
        await started.wait()
        return manager


_running = _Running()


async def mcp_asgi(scope: dict[str, Any], receive: Any, send: Any) -> None:
    user = await guarded(scope, send)
    if user is None:
        return
    manager = await _running.manager()
    await manager.handle_request({**scope, "studio_user": user}, receive, send)
