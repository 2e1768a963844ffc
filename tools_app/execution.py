"""The one pipeline every tool run goes through, whatever the tool's type.

    parse the input text (syntax errors with line and column)
    -> validate against the input schema (every error with its JSON path)
    -> execute with the tool's timeout and the abort event
    -> validate the output against the output schema (a mismatch fails the run, the raw
       output is kept for display)
    -> to_model_output (the code definition's callable, or the studio config)
    -> record a ToolRun

Two entry points:
- `tool_execute(*, tool, input, user, ...) -> ToolRun`: a synchronous service for REST
  and the CLI. It always records a ToolRun; `mode="async"` records it pending and
  enqueues a Celery task (tools_app.tasks) after commit.
- `await run_tool(tool, input, context) -> ToolOutcome`: the async core the agent run
  loop uses. It writes NOTHING unless `context.record` is true; then it writes one
  ToolRun linked to `context.tool_call` (the run loop keeps its own ToolCall row, so
  recording is opt-in to avoid two rows per call).

Failures never raise out of either entry point (except ToolSuspended, see below): a
crash, a timeout, an abort, an invalid input or output becomes a failed outcome with a
clear message. A tool that must wait for a human raises `ToolSuspended(payload)`;
run_tool returns it as an outcome with status "suspended" and `suspend_payload`; the run
loop resumes by calling run_tool again with `context.resume_payload` set (validated
against the definition's resume_schema), which the suspending tools return as output.

A result object with `isError: true` (web_fetch, web_search) is a failed run whose
output is still that object, so the model sees the reason and the CLI exits non-zero.
"""

from __future__ import annotations

import asyncio
import inspect
import json
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

from asgiref.sync import async_to_sync, sync_to_async
from django.utils import timezone
from jsonschema import Draft202012Validator
from jsonschema.exceptions import SchemaError
from jsonschema.validators import validator_for

from studio.json_input import JSONInputError, check_nesting, json_loads, json_path, replace_nul
from tools_app.models import ExecutionMode, Tool, ToolRun, ToolRunStatus

MAX_LOG_CHARS = 64_000
NUL_NOTE = "[studio] NUL characters (U+0000) in the result are shown as U+FFFD."


class ToolSuspended(Exception):  # noqa: N818 - the contract's name
    """Raised by a tool that must wait for a human (ask_user, submit_plan, client tools)."""

    def __init__(self, payload: dict[str, Any]) -> None:
        super().__init__(payload.get("kind", "suspended"))
        self.payload = payload


class ToolError(Exception):
    """A failure a tool reports on purpose; `output` (optional) is still shown."""

    def __init__(self, message: str, *, output: Any = None, errors: list | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.output = output
        self.errors = errors or []


class InputError(ToolError):
    """The input text or value is not acceptable (syntax or schema)."""


@dataclass
class ExecutionContext:
    """What a tool sees besides its input. Code tools receive this object as `context`."""

    user: Any = None
    run: Any = None
    thread: Any = None
    tool_call: Any = None
    abort: asyncio.Event | None = None
    # log(text): appends to the run's logs; writer(event): custom events for the stream.
    log_writer: Callable[[str], Any] | None = None
    writer: Callable[[dict[str, Any]], Any] | None = None
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

    def log(self, text: str) -> None:
        self.logs.append(str(text))
        if self.log_writer is not None:
            self.log_writer(str(text))

    async def write(self, event: dict[str, Any]) -> None:
        if self.writer is not None:
            result = self.writer(event)
            if inspect.isawaitable(result):
                await result

    def logs_text(self) -> str:
        text = "".join(line if line.endswith("\n") else line + "\n" for line in self.logs)
        if len(text) > MAX_LOG_CHARS:
            return text[:MAX_LOG_CHARS] + f"\n[logs cut at {MAX_LOG_CHARS} characters]\n"
        return text


@dataclass
class ToolOutcome:
    status: str  # "completed" | "failed" | "suspended"
    output: Any = None
    model_output: Any = None
    error: str = ""
    errors: list[dict[str, str]] = field(default_factory=list)
    logs: str = ""
    duration_ms: float = 0.0
    isolation: str | None = None
    suspend_payload: dict[str, Any] | None = None
    tool_run: ToolRun | None = None

    @property
    def ok(self) -> bool:
        return self.status == ToolRunStatus.COMPLETED


# --- parsing and validation ---------------------------------------------------------------
def parse_input_text(text: str) -> Any:
    """Input typed as JSON text, held to the limits of all JSON from outside (depth, NUL,
    numbers: studio.json_input); a syntax error comes with its line and column."""
    try:
        return json_loads(text, max_string_chars=0)
    except JSONInputError as exc:
        raise InputError(exc.message, errors=exc.extra["errors"]) from None


def schema_errors(schema: dict[str, Any] | None, value: Any) -> list[dict[str, str]]:
    """Every error of `value` against `schema`, each with its JSON path, sorted by path."""
    if not schema:
        return []
    validator = _validator(json.dumps(schema, sort_keys=True))
    if isinstance(validator, str):
        return [{"path": "$", "message": f"The tool's schema is invalid: {validator}"}]
    errors = [
        {"path": json_path(error.absolute_path), "message": error.message}
        for error in validator.iter_errors(value)
    ]
    return sorted(errors, key=lambda e: e["path"])


@lru_cache(maxsize=512)
def _validator(schema_text: str) -> Any:
    """A checked validator per distinct schema (checking a schema costs milliseconds,
    validating a small input microseconds); the error message for an invalid schema."""
    schema = json.loads(schema_text)
    cls = validator_for(schema, default=Draft202012Validator)
    try:
        cls.check_schema(schema)
    except SchemaError as exc:
        return exc.message
    return cls(schema, format_checker=cls.FORMAT_CHECKER)


def validate_input(tool: Tool, value: Any) -> None:
    errors = schema_errors(tool.input_schema, value)
    if errors:
        raise InputError(
            _summary("Input does not match the tool's input schema", errors), errors=errors
        )


def _summary(prefix: str, errors: list[dict[str, str]]) -> str:
    first = errors[0]
    more = f" (and {len(errors) - 1} more)" if len(errors) > 1 else ""
    return f"{prefix}: {first['path']}: {first['message']}{more}"


def _json_safe(value: Any) -> Any:
    """The output as JSON carries it, no deeper than STUDIO_MAX_JSON_DEPTH; else a tool error."""
    try:
        check_nesting(text := json.dumps(value, allow_nan=False))
        return json.loads(text)
    except (TypeError, ValueError, RecursionError, JSONInputError) as exc:
        raise ToolError(f"The tool returned a value the studio cannot keep: {exc}") from None


def _without_nul(outcome: ToolOutcome) -> None:
    """NUL (U+0000) cannot be stored: what the tool produced shows U+FFFD, and says so."""
    names = ("output", "model_output", "error", "errors", "suspend_payload", "logs")
    values = [getattr(outcome, name) for name in names]
    if "\\u0000" in json.dumps(values, default=str):
        cleaned = replace_nul(values)
        if cleaned != values:  # not only an escaped "\\u0000" written as text
            for name, value in zip(names, cleaned, strict=True):
                setattr(outcome, name, value)
            outcome.logs += f"{NUL_NOTE}\n"


# --- model output -------------------------------------------------------------------------
def apply_model_output(tool: Tool, output: Any) -> Any:
    """What the model sees. Code tools: their to_model_output callable. Studio tools:
    `tool.model_output` = {"pick": ["field", ...]} (keep these top-level keys) and/or
    {"max_chars": N} (the JSON text, cut). Empty config: the output itself."""
    definition = _definition(tool)
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


def _definition(tool: Tool) -> Any:
    if tool.source != "code":
        return None
    from agents_core.registry import get_tool_definition

    return get_tool_definition(tool.name)


# --- the async core -----------------------------------------------------------------------
async def run_tool(tool: Tool, input: Any, context: ExecutionContext | None = None) -> ToolOutcome:  # noqa: A002
    """Validate, execute with timeout/abort, validate the output, map it for the model."""
    context = context or ExecutionContext()
    started = time.perf_counter()
    try:
        outcome = await _run(tool, input, context)
    except ToolSuspended as exc:
        outcome = ToolOutcome(status="suspended", suspend_payload=exc.payload)
    except ToolError as exc:
        outcome = ToolOutcome(
            status=ToolRunStatus.FAILED, output=exc.output, error=exc.message, errors=exc.errors
        )
    except Exception as exc:  # noqa: BLE001 - any crash of a tool is a failed run
        outcome = ToolOutcome(status=ToolRunStatus.FAILED, error=_crash_message(exc))
    outcome.duration_ms = round((time.perf_counter() - started) * 1000, 3)
    outcome.logs = context.logs_text()
    _without_nul(outcome)
    outcome.isolation = context.isolation
    if context.record:
        outcome.tool_run = await sync_to_async(_record)(
            tool=tool,
            input=input,
            outcome=outcome,
            user=context.user,
            tool_call=context.tool_call,
            mode=ExecutionMode.SYNC,
        )
    return outcome


async def _run(tool: Tool, input: Any, context: ExecutionContext) -> ToolOutcome:  # noqa: A002
    validate_input(tool, input)
    from tools_app.types import get_type

    tool_type = get_type(tool.kind)
    output = await _with_limits(
        tool_type.execute(tool, input, context), tool_type.wait_seconds(tool), context.abort
    )
    output = _json_safe(output)
    if isinstance(output, dict) and output.get("isError") is True:
        raise ToolError(str(output.get("error") or "The tool reported an error."), output=output)
    errors = schema_errors(tool.output_schema, output)
    if errors:
        raise ToolError(
            _summary("Output does not match the tool's output schema", errors),
            output=output,
            errors=errors,
        )
    try:
        model_output = _json_safe(apply_model_output(tool, output))
    except ToolError:
        raise
    except Exception as exc:  # noqa: BLE001
        raise ToolError(f"to_model_output failed: {_crash_message(exc)}", output=output) from None
    return ToolOutcome(status=ToolRunStatus.COMPLETED, output=output, model_output=model_output)


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


def _crash_message(exc: BaseException) -> str:
    text = str(exc)
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


# --- the sync service ---------------------------------------------------------------------
def tool_execute(
    *,
    tool: Tool,
    input: Any = None,  # noqa: A002
    user: Any = None,
    context: ExecutionContext | None = None,
    mode: str = "sync",
    input_text: str | None = None,
) -> ToolRun:
    """Run a tool for REST or the CLI and return its recorded ToolRun (never raises for a
    tool failure; an input error is a failed ToolRun with `errors`)."""
    if mode not in (ExecutionMode.SYNC, ExecutionMode.ASYNC):
        raise ValueError(f"mode must be 'sync' or 'async', not {mode!r}")
    context = context or ExecutionContext(user=user)
    context.user = context.user or user
    try:
        if input_text is not None:
            input = parse_input_text(input_text)  # noqa: A001
        validate_input(tool, input)
    except InputError as exc:
        stored = input if input_text is None else input_text
        outcome = ToolOutcome(status=ToolRunStatus.FAILED, error=exc.message, errors=exc.errors)
        run = _record(tool=tool, input=stored, outcome=outcome, user=user, mode=mode)
        run.input_rejected = True  # not a column: lets REST answer 400 for this response
        return run
    if mode == ExecutionMode.ASYNC:
        from tools_app.services.runs import tool_run_enqueue

        return tool_run_enqueue(tool=tool, input=input, user=user)
    outcome = async_to_sync(run_tool)(tool, input, context)
    return _record(tool=tool, input=input, outcome=outcome, user=user, mode=mode)


def _record(
    *,
    tool: Tool,
    input: Any,
    outcome: ToolOutcome,
    user: Any,
    mode: str,  # noqa: A002
    tool_call: Any = None,
) -> ToolRun:
    now = timezone.now()
    status, error, output = outcome.status, outcome.error, outcome.output
    if outcome.status == "suspended":
        # Outside a chat nobody can answer: show what the tool would have asked.
        status, output = ToolRunStatus.FAILED, outcome.suspend_payload
        error = "This tool waits for a person's answer; it completes in the preview chat."
    # One INSERT: atomic by itself (an explicit transaction would only add round trips).
    return ToolRun.objects.create(
        tool=tool,
        status=status,
        mode=mode,
        input=input,
        output=output,
        model_output=outcome.model_output,
        error=error,
        errors=outcome.errors,
        logs=logs_with_isolation(outcome),
        duration_ms=outcome.duration_ms,
        attempts=1,
        # The run loop passes the ToolCall row or its primary key.
        tool_call_id=getattr(tool_call, "pk", tool_call),
        created_by=user if getattr(user, "is_authenticated", False) else None,
        started_at=now,
        finished_at=now,
    )


def logs_with_isolation(outcome: ToolOutcome) -> str:
    # ToolRun has no isolation column; the sandbox mode is the first log line so that the
    # console and the API can show which isolation ran (tool_run_data parses it back).
    if outcome.isolation:
        return f"{ISOLATION_PREFIX}{outcome.isolation}\n{outcome.logs}"
    return outcome.logs


ISOLATION_PREFIX = "[sandbox] isolation="
