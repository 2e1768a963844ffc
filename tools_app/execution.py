"""The one pipeline every tool run goes through, whatever the tool's type or caller.

    validate the input against the input schema (every error with its JSON path)
    -> the caller's `before` step, if any (a chat's hooks: go on, maybe with a new input,
       which is validated again; skip with an output; suspend; defer to a worker)
    -> execute with the tool's timeout and the abort event
    -> validate the output against the output schema (a mismatch fails the run, the raw
       output is kept for display)
    -> the caller's `after` step, if any (a chat's after hook: may replace the output or
       the error)
    -> to_model_output (the code definition's callable, or the studio config)
    -> record a ToolRun, when `context.record` is true

`await run_tool(tool, input, context) -> ToolOutcome` is the only place that validates a
tool's input and output and maps its output for the model: the agent loop, the REST and
CLI service (tools_app.services.execute, through `run_tool_sync`: the same pipeline with
no event loop when the tool runs inline), the Celery worker (tools_app.services.runs) and
the MCP server all call it. It writes nothing unless `context.record` is true. A tool type
may make a run on the caller's thread (`ToolType.execute_inline`: a fast sync code tool,
under a watchdog deadline); otherwise `execute` is awaited with the timeout and abort.

Failures never raise out of it: a crash, a timeout, an abort, an invalid input or output
becomes a failed outcome with a clear message. A tool that must wait for a human raises
`ToolSuspended(payload)`; run_tool returns an outcome with status "suspended" and
`suspend_payload`; the caller resumes by calling run_tool again with
`context.resume_payload` set, which the suspending tools return as output.

A result object with `isError: true` (web_fetch, web_search) is a failed run whose
output is still that object, so the model sees the reason and the CLI exits non-zero.
"""

from __future__ import annotations

import asyncio
import inspect
import json
import logging
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

from asgiref.sync import async_to_sync, sync_to_async

from common.json_input import has_nul, replace_nul
from tools_app.agent_side import AgentSide, agent_side_get
from tools_app.deadlines import DeadlinePassed
from tools_app.errors import InputError, ToolError, ToolSuspended, crash_message
from tools_app.models import ExecutionMode, Tool, ToolRun, ToolRunStatus
from tools_app.records import tool_run_record
from tools_app.redaction import secrets_scope
from tools_app.types import INLINE_DECLINED
from tools_app.validation import json_safe, schema_errors, summary, validate_input

logger = logging.getLogger(__name__)

MAX_LOG_CHARS = 64_000
NUL_NOTE = "[studio] NUL characters (U+0000) in the result are shown as U+FFFD."
SUSPENDED, SKIPPED, DEFERRED = "suspended", "skipped", "deferred"
# What a run's outcome carries of the tool's making (cleaned of NUL and of secrets).
OUTCOME_FIELDS = ("output", "model_output", "error", "errors", "suspend_payload", "logs")
_SAME = object()


@dataclass
class Gate:
    """What a caller's `before` step decides. `action`: "proceed" (with `input` instead
    of the original when given), "skip" (the call does not run; `output` is its result),
    "suspend" (wait for a person with `payload`), "defer" (the caller runs it later)."""

    action: str = "proceed"
    input: Any = _SAME
    output: Any = None
    payload: dict[str, Any] | None = None


@dataclass
class ExecutionContext:
    """What a tool sees besides its input. Code tools receive this object as `context`."""

    user: Any = None
    run: Any = None
    thread: Any = None
    tool_call: Any = None
    call_id: str | None = None  # the model's id of the chat's tool call
    abort: asyncio.Event | None = None
    # log(text): appends to the run's logs; writer(event): custom events for the stream.
    log_writer: Callable[[str], Any] | None = None
    writer: Callable[[dict[str, Any]], Any] | None = None
    # on_wait(note): the run waits for a shared resource (a sandbox slot) and why; then
    # on_wait(None) once it runs. The chat and the console show it while it lasts.
    on_wait: Callable[[str | None], Awaitable[None]] | None = None
    # Returns the tool's decrypted credentials; only types that declare credential
    # fields (HTTP) call it; Python code tools never do.
    credentials: Callable[[Tool], dict[str, Any]] | None = None
    resume_payload: Any = None
    # Async runs: the same key for every attempt of the run (a run is retried after its
    # worker died), so a tool with side effects can recognise a repeat; `attempt` counts
    # from 1. None / 1 for runs that are never retried.
    idempotency_key: str | None = None
    attempt: int = 1
    record: bool = False
    logs: list[str] = field(default_factory=list)
    isolation: str | None = None
    # What the agent side lends (tools_app.agent_side); None: the one installed at start.
    agent_side: AgentSide | None = None
    # The caller's steps around the execution (see the module docstring).
    before: Callable[[Any], Awaitable[Gate | None]] | None = None
    after: Callable[[Any, str], Awaitable[tuple[Any, str]]] | None = None
    # Extra fields a tool adds to the chat's tool-result (a sub-agent's thread and run).
    links: dict[str, Any] = field(default_factory=dict)

    @property
    def side(self) -> AgentSide | None:
        return self.agent_side or agent_side_get()

    def log(self, text: str) -> None:
        self.logs.append(str(text))
        if self.log_writer is not None:
            self.log_writer(str(text))

    async def write(self, event: dict[str, Any]) -> None:
        if self.writer is not None:
            result = self.writer(event)
            if inspect.isawaitable(result):
                await result

    async def waiting(self, note: str | None) -> None:
        """Tell the caller the run waits (`note`: why) or runs again (None). Never
        raises: a caller that cannot be told must not stop the run."""
        if self.on_wait is None:
            return
        try:
            await self.on_wait(note)
        except Exception:  # noqa: BLE001 - showing the wait is best effort
            logger.warning("Could not show a tool run's wait", exc_info=True)

    def logs_text(self) -> str:
        text = "".join(line if line.endswith("\n") else line + "\n" for line in self.logs)
        if len(text) > MAX_LOG_CHARS:
            return text[:MAX_LOG_CHARS] + f"\n[logs cut at {MAX_LOG_CHARS} characters]\n"
        return text


@dataclass
class ToolOutcome:
    status: str  # "completed" | "failed" | "suspended" | "skipped" | "deferred"
    output: Any = None
    model_output: Any = None
    error: str = ""
    errors: list[dict[str, str]] = field(default_factory=list)
    logs: str = ""
    duration_ms: float = 0.0
    isolation: str | None = None
    suspend_payload: dict[str, Any] | None = None
    tool_run: ToolRun | None = None
    # The input (or the input a before step gave) did not match the input schema.
    input_rejected: bool = False
    links: dict[str, Any] = field(default_factory=dict)

    @property
    def ok(self) -> bool:
        return self.status == ToolRunStatus.COMPLETED


# --- model output -------------------------------------------------------------------------
def tool_definition(tool: Tool, context: ExecutionContext | None = None) -> Any:
    """A code tool's Python definition, through the agent side (None for studio tools)."""
    if tool.source != "code":
        return None
    side = (context or ExecutionContext()).side
    return side.tool_definition(tool.name) if side is not None else None


def apply_model_output(tool: Tool, output: Any, context: ExecutionContext | None = None) -> Any:
    """What the model sees. Code tools: their to_model_output callable. Studio tools:
    `tool.model_output` = {"pick": ["field", ...]} (keep these top-level keys) and/or
    {"max_chars": N} (the JSON text, cut). Empty config: the output itself."""
    definition = tool_definition(tool, context)
    if definition is not None and definition.to_model_output is not None:
        return definition.to_model_output(output)
    config = tool.model_output or {}
    result = output
    pick = config.get("pick")
    if pick and isinstance(result, dict):
        result = {key: result[key] for key in pick if key in result}
    max_chars = config.get("max_chars")
    if max_chars:
        text = result if isinstance(result, str) else json.dumps(result, ensure_ascii=False)
        if len(text) > int(max_chars):
            result = text[: int(max_chars)] + "…"
    return result


# --- the pipeline -------------------------------------------------------------------------
async def run_tool(tool: Tool, input: Any, context: ExecutionContext | None = None) -> ToolOutcome:  # noqa: A002
    """Validate, execute with timeout/abort, validate the output, map it for the model."""
    return await _pipeline(tool, input, context or ExecutionContext(), loop_free=False)


class _LoopNeeded(BaseException):  # noqa: N818 - passes _caught's `except Exception`
    """The run must be awaited on an event loop (raised before the tool runs)."""


def run_tool_sync(tool: Tool, input: Any, context: ExecutionContext | None = None) -> ToolOutcome:  # noqa: A002
    """`run_tool` for a caller on a thread without an event loop (REST, the CLI). A run
    the tool's type makes inline (a fast sync code tool) goes through the same pipeline
    with no event loop at all: nothing in it waits, so one step of the coroutine finishes
    it. Any other run, or a context with `before`/`after` steps or `record`, goes
    through async_to_sync (an event loop in another thread)."""
    context = context or ExecutionContext()
    if context.before is None and context.after is None and not context.record:
        steps = _pipeline(tool, input, context, loop_free=True)
        try:
            steps.send(None)
        except StopIteration as finished:
            return finished.value  # type: ignore[no-any-return]
        except _LoopNeeded:
            pass  # declined before the tool ran: nothing was done twice
        else:
            steps.close()
            raise RuntimeError("The tool pipeline waited with no event loop to wait on.")
    return async_to_sync(run_tool)(tool, input, context)


async def _pipeline(
    tool: Tool,
    input: Any,  # noqa: A002
    context: ExecutionContext,
    *,
    loop_free: bool,
) -> ToolOutcome:
    started = [time.perf_counter()]  # _run restarts it once the caller's gate let it go
    # The call's secrets (its run's, when it has one): whatever the tool decrypts is
    # recorded there, and taken out of what the call hands back (tools_app.redaction).
    with secrets_scope() as secrets:
        outcome = await _caught(_run(tool, input, context, started, loop_free))
        outcome.duration_ms = round((time.perf_counter() - started[0]) * 1000, 3)
        if outcome.status in (ToolRunStatus.COMPLETED, ToolRunStatus.FAILED):
            if not outcome.input_rejected:
                await _caught(_after(tool, outcome, context))
        outcome.logs = context.logs_text()
        outcome.links = dict(context.links)
        _without_nul(outcome)
        # An API may echo the credential it was sent, in an error or in its answer.
        secrets.attributes(outcome, OUTCOME_FIELDS)
    outcome.isolation = context.isolation
    if context.record:
        outcome.tool_run = await sync_to_async(tool_run_record)(
            tool=tool,
            input=input,
            outcome=outcome,
            user=context.user,
            tool_call=context.tool_call,
            mode=ExecutionMode.SYNC,
        )
    return outcome


async def _caught(step: Awaitable[ToolOutcome | None]) -> ToolOutcome:
    """The step's outcome; what it raises becomes a failed or suspended outcome."""
    try:
        return await step  # type: ignore[return-value]
    except ToolSuspended as exc:
        return ToolOutcome(status=SUSPENDED, suspend_payload=exc.payload)
    except InputError as exc:
        return ToolOutcome(
            status=ToolRunStatus.FAILED, error=exc.message, errors=exc.errors, input_rejected=True
        )
    except ToolError as exc:
        return ToolOutcome(
            status=ToolRunStatus.FAILED, output=exc.output, error=exc.message, errors=exc.errors
        )
    except Exception as exc:  # noqa: BLE001 - any crash of a tool is a failed run
        return ToolOutcome(status=ToolRunStatus.FAILED, error=crash_message(exc))


async def _run(
    tool: Tool,
    input: Any,  # noqa: A002
    context: ExecutionContext,
    started: list[float],
    loop_free: bool = False,
) -> ToolOutcome:
    validate_input(tool.input_schema, input)
    if context.before is not None:
        gate = await context.before(input)
        if gate is not None and gate.action != "proceed":
            return _gated(gate)
        if gate is not None and gate.input is not _SAME:
            input = gate.input  # noqa: A001
            validate_input(tool.input_schema, input)
        started[0] = time.perf_counter()
    from tools_app.types import get_type

    tool_type = get_type(tool.kind)
    timeout = tool_type.wait_seconds(tool)
    output = _inline(tool_type, tool, input, context, timeout)
    if output is INLINE_DECLINED:
        if loop_free:
            raise _LoopNeeded
        output = await _with_limits(tool_type.execute(tool, input, context), timeout, context.abort)
    elif inspect.isawaitable(output):  # a sync execute that returned an awaitable anyway
        if loop_free:
            _discard(output)
            raise ToolError("The tool returned an awaitable where no event loop runs.")
        output = await _with_limits(output, timeout, context.abort)
    output = json_safe(output)
    if isinstance(output, dict) and output.get("isError") is True:
        raise ToolError(str(output.get("error") or "The tool reported an error."), output=output)
    errors = schema_errors(tool.output_schema, output)
    if errors:
        raise ToolError(
            summary("Output does not match the tool's output schema", errors),
            output=output,
            errors=errors,
        )
    return ToolOutcome(status=ToolRunStatus.COMPLETED, output=output)


def _inline(
    tool_type: Any, tool: Tool, input: Any, context: ExecutionContext, timeout: float
) -> Any:  # noqa: A002
    """The run made on this thread by its type, or INLINE_DECLINED (an aborted run is
    left to `_with_limits`, which reports the abort)."""
    if context.abort is not None and context.abort.is_set():
        return INLINE_DECLINED
    try:
        return tool_type.execute_inline(tool, input, context, timeout)
    except DeadlinePassed:
        raise ToolError(f"The tool timed out after {timeout:g} s.") from None


def _discard(awaitable: Any) -> None:
    if inspect.iscoroutine(awaitable):
        awaitable.close()


def _gated(gate: Gate) -> ToolOutcome:
    if gate.action == "skip":
        return ToolOutcome(status=SKIPPED, output=gate.output, model_output=gate.output)
    if gate.action == "suspend":
        return ToolOutcome(status=SUSPENDED, suspend_payload=gate.payload or {})
    if gate.action == "defer":
        return ToolOutcome(status=DEFERRED)
    raise ValueError(f"Unknown gate action {gate.action!r}")


async def _after(tool: Tool, outcome: ToolOutcome, context: ExecutionContext) -> None:
    """The caller's after step, then what the model sees of a completed run."""
    if context.after is not None:
        output, error = await context.after(outcome.output, outcome.error)
        if error:
            outcome.status, outcome.error = ToolRunStatus.FAILED, error
        elif output is not outcome.output or outcome.status != ToolRunStatus.COMPLETED:
            outcome.status, outcome.error, outcome.errors = ToolRunStatus.COMPLETED, "", []
        outcome.output = output
    if outcome.status != ToolRunStatus.COMPLETED:
        return
    try:
        outcome.model_output = json_safe(apply_model_output(tool, outcome.output, context))
    except Exception as exc:  # noqa: BLE001
        message = exc.message if isinstance(exc, ToolError) else crash_message(exc)
        outcome.status = ToolRunStatus.FAILED
        outcome.error = f"to_model_output failed: {message}"


async def _with_limits(coro: Any, timeout: float, abort: asyncio.Event | None) -> Any:
    """Await `coro` for at most `timeout` seconds, or until `abort` is set."""

    async def race() -> Any:
        task = asyncio.ensure_future(coro)
        if abort is None:
            return await task
        aborted = asyncio.ensure_future(abort.wait())
        try:
            await asyncio.wait({task, aborted}, return_when=asyncio.FIRST_COMPLETED)
        finally:
            aborted.cancel()
        if task.done():
            return task.result()
        task.cancel()
        raise ToolError("The run was aborted.")

    try:
        return await asyncio.wait_for(race(), timeout=timeout)
    except TimeoutError:
        raise ToolError(f"The tool timed out after {timeout:g} s.") from None


def _without_nul(outcome: ToolOutcome) -> None:
    """NUL (U+0000) cannot be stored: what the tool produced shows U+FFFD, and says so."""
    values = [getattr(outcome, name) for name in OUTCOME_FIELDS]
    if has_nul(values):
        for name, value in zip(OUTCOME_FIELDS, replace_nul(values), strict=True):
            setattr(outcome, name, value)
        outcome.logs += f"{NUL_NOTE}\n"
