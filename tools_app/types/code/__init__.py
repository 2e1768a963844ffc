"""Tools defined in Python code (tools_app.definitions.create_tool): the definition's
execute(input, context), found through the agent side (context.side.tool_definition),
runs in the server process (it is the project's own code, not user input). Async
callables are awaited; sync ones run in a thread of their own until they have shown they
are fast, then on the caller's thread (pace.py says when, tools_app/deadlines.py how
their timeout holds there). The context is
tools_app.execution.ExecutionContext: user, run, thread, abort, log, write and, for
async runs, idempotency_key and attempt."""

from __future__ import annotations

import asyncio
import inspect
import threading
import time
from collections.abc import Callable
from typing import Any, ClassVar

from django.db import connection

from tools_app.types import ToolType
from tools_app.types.code.pace import DECLINED, Pace, pace_of, run_inline, used_database


def definition_for(tool: Any, context: Any) -> Any:
    from tools_app.errors import ToolError

    side = getattr(context, "side", None)
    definition = side.tool_definition(tool.name) if side is not None else None
    if definition is None or tool.gone_at is not None:
        raise ToolError(
            f"The code of tool {tool.name!r} is not loaded in this process "
            "(removed from code, or its module is not installed)."
        )
    if definition.execute is None:
        raise ToolError(f"Tool {tool.name!r} has no execute function.")
    return definition


async def execute_definition(tool: Any, input: Any, context: Any) -> Any:  # noqa: A002
    definition = definition_for(tool, context)
    return await call_maybe_async(definition.execute, input, context, pace=pace_of(definition))


def execute_definition_inline(tool: Any, input: Any, context: Any, timeout: float) -> Any:  # noqa: A002
    """The run on the caller's thread when the definition's pace allows it, else DECLINED."""
    definition = definition_for(tool, context)
    pace = pace_of(definition)
    if not (pace.inline and definition.inline):
        return DECLINED
    return run_inline(pace, (input, context), timeout)


async def call_maybe_async(fn: Callable[..., Any], *args: Any, pace: Pace | None = None) -> Any:
    """Await async callables; run sync ones in a worker thread so timeouts still apply
    (a sync function that never returns keeps its thread, not the event loop). `pace`
    hears how long the thread run took and whether it used the database."""
    if inspect.iscoroutinefunction(fn):
        return await fn(*args)
    result = await _in_own_thread(fn, *args, pace=pace)
    if inspect.isawaitable(result):
        result = await result
    return result


def _in_own_thread(fn: Callable[..., Any], *args: Any, pace: Pace | None) -> asyncio.Future[Any]:
    """Run `fn` in a daemon thread of its own. Not the loop's default executor: closing
    an event loop waits for that executor, so a runaway sync tool would hold the caller
    (async_to_sync) after its timeout fired."""
    loop = asyncio.get_running_loop()
    future: asyncio.Future[Any] = loop.create_future()

    def settle(ok: bool, value: Any) -> None:
        if not future.done():
            future.set_result(value) if ok else future.set_exception(value)

    def target() -> None:
        started = time.perf_counter()
        try:
            value, ok = fn(*args), True
        except BaseException as exc:  # noqa: BLE001 - handed to the awaiting task
            value, ok = exc, False
        finally:
            if pace is not None:
                pace.observed(
                    time.perf_counter() - started,
                    used_database=used_database(),
                    awaitable=ok and inspect.isawaitable(value),
                )
            connection.close()  # the thread ends; its database connection must not leak
        try:
            loop.call_soon_threadsafe(settle, ok, value)
        except RuntimeError:
            pass  # the loop is gone: the caller stopped waiting (timeout or abort)

    threading.Thread(
        target=target, name=f"tool-{getattr(fn, '__name__', 'fn')}", daemon=True
    ).start()
    return future


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

    def execute_inline(self, tool: Any, input: Any, context: Any, timeout: float) -> Any:  # noqa: A002
        return execute_definition_inline(tool, input, context, timeout)


tool_type = CodeToolType()
