"""The agent loop (DESIGN.md section 7): call the model, stream, run the tool calls,
repeat until no tool calls remain or max steps; suspend and resume.

`execute_run(run_id)` is the whole run as one coroutine. It reads and writes the database
through runtime.db, publishes through an EventSink, and needs nothing from the process
that started it: a run resumed after a restart is rebuilt from its rows (Run.state names
the suspended call and its step).
"""

from __future__ import annotations

import asyncio
import copy
import inspect
import logging
import time
from dataclasses import dataclass, field
from typing import Any

from agents_core.models import RunStatus, ToolCallStatus
from agents_core.runtime import active as active_runs
from agents_core.runtime import heap, model_stream, observers, stats, store
from agents_core.runtime.db import db
from agents_core.runtime.errors import ModelError, model_error
from agents_core.runtime.events import EventSink
from agents_core.runtime.fallbacks import open_stream, run_model_record
from agents_core.runtime.messages import memory_messages, thread_memory
from agents_core.runtime.partial_json import IncrementalJSONParser, PartialJSONError
from agents_core.runtime.setup import RunSetup, ToolSpec, load_setup

logger = logging.getLogger(__name__)

APPROVAL_RESUME = {
    "type": "object",
    "properties": {"approved": {"type": "boolean"}, "reason": {"type": "string"}},
    "required": ["approved"],
    "additionalProperties": False,
}
CLIENT_RESUME = {
    "type": "object",
    "properties": {"output": {}, "error": {"type": "string"}},
    "additionalProperties": False,
}
HIDDEN = "The display transform of this tool failed; its value is hidden."


class Aborted(Exception):  # noqa: N818
    pass


@dataclass
class CallState:
    index: int
    id: str
    name: str
    spec: ToolSpec | None
    parser: IncrementalJSONParser = field(default_factory=IncrementalJSONParser)
    text: list[str] = field(default_factory=list)
    parse_error: str = ""
    input: Any = None
    input_error: str = ""
    ended: bool = False
    pk: int | None = None
    hidden: bool = False
    hook_decisions: list[dict[str, Any]] = field(default_factory=list)


@dataclass
class RunResult:
    status: str
    text: str = ""
    error: str = ""


def suspend_kind(payload: dict[str, Any]) -> str:
    return str(payload.get("kind") or "suspended")


def resume_schema_for(spec: ToolSpec | None, payload: dict[str, Any] | None) -> Any:
    kind = suspend_kind(payload or {})
    if kind == "approval":
        return APPROVAL_RESUME
    if kind == "client-function":
        return CLIENT_RESUME
    return spec.resume_schema if spec is not None else None


async def _maybe_await(value: Any) -> Any:
    if inspect.isawaitable(value):
        return await value
    return value


async def call_hook(fn: Any, *args: Any) -> Any:
    """Hooks may be sync or async; a sync hook that touches the database runs in a thread."""
    if fn is None:
        return None
    if inspect.iscoroutinefunction(fn):
        return await fn(*args)
    return await _maybe_await(await asyncio.to_thread(fn, *args))


def _lifecycle(spec: ToolSpec | None, name: str, payload: dict[str, Any]) -> None:
    """on_input_start / on_input_delta / on_input_available / on_output: notifications;
    they run inline (keep them cheap) and their failures are logged, never fatal."""
    definition = spec.definition if spec is not None else None
    fn = getattr(definition, name, None) if definition is not None else None
    if fn is None:
        return
    try:
        result = fn(payload)
        if inspect.isawaitable(result):
            task = asyncio.ensure_future(result)
            task.add_done_callback(lambda t: t.exception())
    except Exception:  # noqa: BLE001
        logger.exception("Tool %s hook %s failed", spec.name, name)


class Runner:
    def __init__(self, setup: RunSetup, sink: EventSink, active: active_runs.ActiveRun) -> None:
        self.setup = setup
        self.sink = sink
        self.active = active
        self.run_id = str(setup.run.id)
        self.step = setup.run.step
        self.usage: dict[str, int] = {}
        self.last_text = ""
        self.partial_text = ""
        self.step_message: int | None = None
        self.memory_upto: int | None = None
        self.hooks = {**setup.hooks, **active.hooks}
        # The model that answered the last call (the agent's or a fallback), kept on the run.
        self.answered = setup.run.model

    # --- the run -------------------------------------------------------------------------
    async def run(self) -> RunResult:
        try:
            resume = (self.setup.run.state or {}).get("resume")
            observers.notify(
                "run_started",
                self.run_id,
                agent=self.setup.agent.slug,
                model=self.setup.agent.model,
                resumed=bool(resume),
                step=self.step,
            )
            if resume:
                await self.sink.emit(
                    "run-start", agent=self.setup.agent.slug, resumed=True, step=self.step
                )
                if await self._resume(resume):
                    return RunResult(RunStatus.SUSPENDED)
                await self.sink.emit(
                    "step-finish", step=self.step, finishReason="tool-calls", usage=self.usage
                )
            else:
                await self.sink.emit(
                    "run-start",
                    agent=self.setup.agent.slug,
                    resumed=False,
                    step=self.step,
                    message=(self.setup.run.state or {}).get("message"),
                )
            while True:
                if self.step >= self.setup.max_steps:
                    return await self._finish("max-steps")
                self.step += 1
                calls, finish_reason = await self._model_step()
                if not calls:
                    await self.sink.emit(
                        "step-finish", step=self.step, finishReason=finish_reason, usage=self.usage
                    )
                    return await self._finish(finish_reason)
                if await self._execute_calls(calls):
                    return RunResult(RunStatus.SUSPENDED)
                await self.sink.emit(
                    "step-finish", step=self.step, finishReason="tool-calls", usage=self.usage
                )
                await observers.flush(self.run_id)
        except Aborted:
            return await self._end(
                RunStatus.ABORTED, "run-finish", status="aborted", finishReason="aborted"
            )
        except ModelError as exc:
            return await self._end(RunStatus.FAILED, "run-error", error=exc.message, code=exc.code)
        except asyncio.CancelledError:
            await asyncio.shield(
                self._end(
                    RunStatus.ABORTED, "run-finish", status="aborted", finishReason="cancelled"
                )
            )
            raise
        except Exception as exc:  # noqa: BLE001 - the run must end visibly, never hang
            logger.exception("Run %s failed", self.run_id)
            return await self._end(
                RunStatus.FAILED,
                "run-error",
                error=f"Internal error: {type(exc).__name__}: {exc}",
                code="internal",
            )

    async def _finish(self, reason: str) -> RunResult:
        observers.notify(
            "run_finished",
            self.run_id,
            status=RunStatus.COMPLETED,
            usage=self.usage,
            steps=self.step,
        )
        await db(
            store.run_finish_save,
            run_id=self.run_id,
            status=RunStatus.COMPLETED,
            usage=self.usage,
            text=self.last_text,
        )
        await self.sink.emit(
            "run-finish",
            status="completed",
            finishReason=reason,
            text=self.last_text,
            usage=self.usage,
            steps=self.step,
            model=self.answered,
        )
        return RunResult(RunStatus.COMPLETED, text=self.last_text)

    async def _end(self, run_status: str, event: str, **fields: Any) -> RunResult:
        error = fields.get("error", "")
        observers.notify(
            "run_finished",
            self.run_id,
            status=run_status,
            usage=self.usage,
            steps=self.step,
            error=error,
        )
        try:
            await db(
                store.run_finish_save,
                run_id=self.run_id,
                status=run_status,
                error=error,
                usage=self.usage,
                thread_id=self.setup.thread_id,
                partial_text=self.partial_text,
                message_id=self.step_message,
            )
            self.sink.failed = None
            await self.sink.emit(event, usage=self.usage, steps=self.step, **fields)
        except Exception:  # noqa: BLE001
            logger.exception("Run %s: could not record its end", self.run_id)
        return RunResult(run_status, error=error)

    def _check_abort(self) -> None:
        if self.active.abort.is_set():
            raise Aborted

    # --- one model call ------------------------------------------------------------------
    async def _model_step(self) -> tuple[list[CallState], str]:
        setup = self.setup
        offline = any(call.model.startswith("studio/") for call in setup.model_calls)
        litellm = await _litellm(offline=offline)
        # Signals delivered into this run are written to the thread's memory by the drain,
        # so reading the memory after it gives each of them to the model exactly once.
        drained = await db(_signals_drain, setup.run)
        if drained:
            observers.notify("signals_drained", self.run_id, signals=drained)
        rows, calls = await db(thread_memory, setup.thread_id, setup.options.get("lastMessages"))
        self.memory_upto = rows[-1].pk if rows else 0
        memory = memory_messages(rows, calls)
        specs = setup.active_specs()
        choice = setup.tool_choice()
        self._check_abort()
        self.step_message = await db(
            store.step_message_start, run_id=self.run_id, thread_id=setup.thread_id
        )

        def request(call: Any) -> dict[str, Any]:
            kwargs = setup.call_kwargs(call, memory, specs, choice)
            # One span per model tried: what each was sent, fallbacks included.
            observers.notify("model_call_started", self.run_id, step=self.step, request=kwargs)
            return kwargs

        response, call = await open_stream(litellm, setup.model_calls, request)
        if call.requested != self.answered:
            self.answered = call.requested
            await db(run_model_record, self.run_id, call.requested)
        allowed = {spec.name: spec for spec in specs} if choice != "none" else {}
        return await self._consume(response, allowed, litellm)

    async def _consume(
        self, response: Any, specs: dict[str, ToolSpec], litellm: Any
    ) -> tuple[list[CallState], str]:
        text: list[str] = []
        calls: dict[int, CallState] = {}
        current: CallState | None = None
        finish_reason = "stop"
        abort = self.active.abort
        perf = time.perf_counter
        self.partial_text = ""
        iterator = response.__aiter__()
        to_the_end = model_stream.read_to_the_end(response, litellm)
        chunk = None
        usage_counted = False
        reported: Any = None
        first_token: float | None = None
        try:
            while True:
                if chunk is not None and await model_stream.stop_at(response, chunk, to_the_end):
                    break  # litellm's assembly of the whole response is skipped
                try:
                    chunk = await iterator.__anext__()
                except StopAsyncIteration:
                    break
                if abort.is_set():
                    self.partial_text = "".join(text)
                    raise Aborted
                started = perf()
                usage = getattr(chunk, "usage", None)
                if usage:
                    self._add_usage(usage)
                    usage_counted = True
                    reported = usage
                if not chunk.choices:
                    continue
                choice = chunk.choices[0]
                delta = choice.delta
                content = getattr(delta, "content", None)
                if content:
                    if first_token is None:
                        first_token = time.time()
                    text.append(content)
                    self.sink.delta(
                        {
                            "type": "text-delta",
                            "runId": self.run_id,
                            "textDelta": content,
                            "step": self.step,
                        }
                    )
                for tool_delta in getattr(delta, "tool_calls", None) or []:
                    index = tool_delta.index if tool_delta.index is not None else 0
                    state = calls.get(index)
                    if state is None:
                        if first_token is None:
                            first_token = time.time()
                        if current is not None:
                            await self._input_end(current)
                        state = self._input_start(index, tool_delta, specs)
                        calls[index] = state
                        current = state
                    arguments = getattr(tool_delta.function, "arguments", None) or ""
                    if arguments:
                        self._input_delta(state, arguments)
                if choice.finish_reason:
                    finish_reason = choice.finish_reason
                stats.add("chunks")
                stats.add("chunk_s", perf() - started)
        except (Aborted, asyncio.CancelledError):
            self.partial_text = "".join(text)
            raise
        except Exception as exc:  # noqa: BLE001 - provider down mid-stream, malformed chunk
            self.partial_text = "".join(text)
            raise model_error(exc, self.answered or self.setup.agent.model) from exc
        if not usage_counted and chunk is not None:
            # Without include_usage, litellm gives the stream's usage on its last chunk.
            reported = model_stream.reported_usage(chunk)
            self._add_usage(reported)
        if current is not None:
            await self._input_end(current)
        full_text = "".join(text)
        ordered = [calls[i] for i in sorted(calls)]
        await self._save_step(full_text, ordered)
        self.partial_text = ""
        self.last_text = full_text
        finish = {"tool_calls": "tool-calls", "function_call": "tool-calls"}.get(
            finish_reason, finish_reason
        )
        observers.notify(
            "model_call_finished",
            self.run_id,
            usage=reported,
            finish_reason=finish_reason,
            first_token_at=first_token,
            response_model=getattr(chunk, "model", None),
        )
        return ordered, ("tool-calls" if ordered else finish)

    def _add_usage(self, usage: Any) -> None:
        for key in ("prompt_tokens", "completion_tokens", "total_tokens"):
            value = getattr(usage, key, None)
            if isinstance(value, int):
                self.usage[key] = self.usage.get(key, 0) + value

    # --- streaming tool input ------------------------------------------------------------
    def _input_start(self, index: int, tool_delta: Any, specs: dict[str, ToolSpec]) -> CallState:
        name = getattr(tool_delta.function, "name", None) or ""
        call_id = tool_delta.id or f"call_{self.run_id[:8]}_{self.step}_{index}"
        state = CallState(index=index, id=call_id, name=name, spec=specs.get(name))
        self.active.parsers[call_id] = state.parser
        self.sink.delta(
            {
                "type": "tool-input-start",
                "runId": self.run_id,
                "toolCallId": call_id,
                "toolName": name,
                "step": self.step,
                "kind": self._kind(state.spec),
            }
        )
        _lifecycle(state.spec, "on_input_start", {"toolCallId": call_id, "toolName": name})
        return state

    @staticmethod
    def _kind(spec: ToolSpec | None) -> str:
        if spec is None:
            return "unknown"
        return "agent" if spec.kind == "subagent" else getattr(spec.tool, "kind", "code")

    def _input_delta(self, state: CallState, arguments: str) -> None:
        state.text.append(arguments)
        patches: list[dict[str, Any]] = []
        if not state.parse_error:
            try:
                patches = state.parser.feed(arguments)
            except PartialJSONError as exc:
                state.parse_error = str(exc)
        transform = getattr(state.spec.definition, "transform", None) if state.spec else None
        if transform is None:
            self.sink.delta(
                {
                    "type": "tool-input-delta",
                    "runId": self.run_id,
                    "toolCallId": state.id,
                    "toolName": state.name,
                    "argsTextDelta": arguments,
                    "patches": patches,
                }
            )
        elif not state.hidden:
            shown = self._display(state, transform, copy.deepcopy(state.parser.value()), "input")
            if state.hidden:
                self.sink.delta(
                    {
                        "type": "tool-input-delta",
                        "runId": self.run_id,
                        "toolCallId": state.id,
                        "toolName": state.name,
                        "patches": [],
                        "hidden": True,
                        "transformError": HIDDEN,
                    }
                )
            else:
                self.sink.delta(
                    {
                        "type": "tool-input-delta",
                        "runId": self.run_id,
                        "toolCallId": state.id,
                        "toolName": state.name,
                        "patches": [{"op": "set", "path": [], "value": shown}],
                        "transformed": True,
                    }
                )
        _lifecycle(
            state.spec,
            "on_input_delta",
            {"toolCallId": state.id, "argsTextDelta": arguments, "patches": patches},
        )

    def _display(self, state: CallState | None, transform: Any, value: Any, phase: str) -> Any:
        """What the page and the transcript see; a failing transform hides the value."""
        if transform is None:
            return value
        try:
            return transform(value, phase)
        except Exception:  # noqa: BLE001
            logger.warning(
                "Display transform of %s failed", getattr(state, "name", "?"), exc_info=True
            )
            if state is not None:
                state.hidden = True
            return None

    async def _input_end(self, state: CallState) -> None:
        if state.ended:
            return
        state.ended = True
        text = "".join(state.text)
        if state.parse_error:
            state.input_error = f"The arguments are not valid JSON: {state.parse_error}"
        elif not text.strip():
            state.input = {}
        else:
            try:
                state.input = state.parser.finish()
            except PartialJSONError as exc:
                state.input_error = f"The arguments are not valid JSON: {exc}"
        self.active.parsers.pop(state.id, None)
        self.sink.delta(
            {
                "type": "tool-input-end",
                "runId": self.run_id,
                "toolCallId": state.id,
                "toolName": state.name,
            }
        )
        if not state.input_error:
            _lifecycle(
                state.spec,
                "on_input_available",
                {"toolCallId": state.id, "toolName": state.name, "input": state.input},
            )

    def _display_input(self, call: CallState) -> Any:
        transform = getattr(call.spec.definition, "transform", None) if call.spec else None
        if transform is None or call.input is None:
            return call.input
        return self._display(call, transform, call.input, "input")

    async def _save_step(self, text: str, calls: list[CallState]) -> None:
        message_id, self.step_message = self.step_message, None
        pks = await db(
            store.step_save,
            run_id=self.run_id,
            thread_id=self.setup.thread_id,
            step=self.step,
            text=text,
            message_id=message_id,
            memory_upto=self.memory_upto,
            calls=[
                {
                    "id": c.id,
                    "name": c.name,
                    "input": c.input,
                    "display": self._display_input(c),
                    "inputText": "".join(c.text),
                    "tool": c.spec.tool if c.spec is not None else None,
                }
                for c in calls
            ],
        )
        for call in calls:
            call.pk = pks[call.id]

    # --- tool calls ------------------------------------------------------------------------
    async def _execute_calls(self, calls: list[CallState]) -> bool:
        """Run the calls of a step in order; True when one suspended the run."""
        for position, call in enumerate(calls):
            self._check_abort()
            payload = await self._execute(call)
            if payload is not None:
                await self._suspend(call, payload, [c.id for c in calls[position + 1 :]])
                return True
        return False

    async def _execute(
        self, call: CallState, resume: Any = None, approved: bool = False
    ) -> dict[str, Any] | None:
        """One call through run_tool, which validates, gates, executes and maps; returns a
        suspend payload when the call waits."""
        from tools_app.execution import DEFERRED, SKIPPED, SUSPENDED, run_tool

        spec = call.spec
        if observers.active():
            observers.notify(
                "tool_call_started",
                self.run_id,
                call_id=call.id,
                name=call.name,
                input=self._display_input(call),
                kind=self._kind(spec),
                mode=spec.execution_mode if spec is not None else "sync",
                resumed=resume is not None or approved,
            )
        if spec is None:
            known = ", ".join(sorted(self.setup.specs)) or "none"
            return await self._fail(call, f"Unknown tool {call.name!r}. Tools: {known}.")
        if call.input_error:
            return await self._fail(call, call.input_error)
        if isinstance(resume, dict) and resume.get("__client_error__"):
            return await self._fail(call, str(resume["__client_error__"]))
        first = resume is None and not approved
        outcome = await run_tool(spec.runnable(), call.input, self._context(call, resume, first))
        observers.notify(
            "tool_executed",
            self.run_id,
            call_id=call.id,
            isolation=outcome.isolation,
            duration_ms=outcome.duration_ms,
        )
        self._check_abort()
        if outcome.status == DEFERRED:
            return await self._enqueue_async(call)
        if outcome.status == SUSPENDED:
            return outcome.suspend_payload or {"kind": "suspended"}
        if outcome.status == SKIPPED:
            return await self._succeed(
                call, outcome.output, outcome.output, status=ToolCallStatus.SKIPPED, skipped=True
            )
        if not outcome.ok:
            return await self._fail(
                call, outcome.error, errors=outcome.errors, output=outcome.output
            )
        return await self._succeed(
            call,
            outcome.output,
            outcome.model_output,
            duration=outcome.duration_ms,
            extra=outcome.links or None,
        )

    async def _gate(self, call: CallState, first: bool, resume: Any) -> Any:
        """Between validation and execution: on a call's first pass the `tool-call` event,
        the before hooks and the approval; an async tool is deferred to a worker."""
        from tools_app.execution import Gate

        spec = call.spec
        given = call.input
        if first:
            transform = getattr(spec.definition, "transform", None)
            shown = self._display(call, transform, call.input, "input")
            await self.sink.emit(
                "tool-call",
                toolCallId=call.id,
                toolName=call.name,
                input=None if call.hidden else shown,
                step=self.step,
                hookDecisions=call.hook_decisions,
                **({"hidden": True} if call.hidden else {}),
            )
            decision = await self._before_hook(call)
            if decision is not None and decision.get("proceed") is False:
                return Gate("skip", output=decision.get("output"))
            if spec.requires_approval:
                question = f"Allow the call to {call.name}?"
                payload = {"kind": "approval", "tool": call.name, "input": call.input}
                return Gate("suspend", payload={**payload, "question": question})
        if spec.execution_mode == "async" and resume is None:
            return Gate("defer")
        return Gate(input=call.input) if call.input is not given else None

    async def _before_hook(self, call: CallState) -> dict[str, Any] | None:
        hook = self.hooks.get("before_tool_call")
        if hook is None:
            return None
        info = {
            "toolCallId": call.id,
            "toolName": call.name,
            "input": call.input,
            "runId": self.run_id,
            "threadId": str(self.setup.thread_id),
        }
        try:
            decision = await call_hook(hook, info)
        except Exception as exc:  # noqa: BLE001 - a broken hook stops the call, not the run
            decision = {
                "proceed": False,
                "output": {"error": f"before_tool_call failed: {exc}"},
                "reason": "hook error",
            }
        if not isinstance(decision, dict):
            return None
        if "input" in decision and decision.get("proceed", True):
            call.input = decision["input"]
        record = {
            "hook": "before_tool_call",
            "source": self._hook_source("before_tool_call"),
            "proceed": decision.get("proceed", True) is not False,
            "reason": decision.get("reason", ""),
            "inputChanged": "input" in decision,
        }
        if decision.get("proceed", True) is False and "output" in decision:
            record["output"] = decision["output"]
        await self._hook_event(call, record)
        return decision

    async def _after_hook(self, call: CallState, output: Any, error: str) -> tuple[Any, str]:
        hook = self.hooks.get("after_tool_call")
        if hook is None or self.active.abort.is_set():
            return output, error
        info = {
            "toolCallId": call.id,
            "toolName": call.name,
            "input": call.input,
            "output": output,
            "error": error or None,
            "runId": self.run_id,
        }
        try:
            decision = await call_hook(hook, info)
        except Exception as exc:  # noqa: BLE001 - the hook's own error becomes the tool's
            decision = {"error": f"after_tool_call failed: {exc}"}
        if not isinstance(decision, dict):
            return output, error
        record = {
            "hook": "after_tool_call",
            "source": self._hook_source("after_tool_call"),
            "outputChanged": "output" in decision,
            "error": decision.get("error", ""),
            "reason": decision.get("reason", ""),
        }
        await self._hook_event(call, record)
        if decision.get("error"):
            return output, str(decision["error"])
        if "output" in decision:
            return decision["output"], ""
        return output, error

    def _hook_source(self, key: str) -> str:
        return "run" if key in self.active.hooks else "agent"

    async def _hook_event(self, call: CallState, record: dict[str, Any]) -> None:
        call.hook_decisions.append(record)
        observers.notify("hook_decision", self.run_id, call_id=call.id, record=record)
        await db(store.tool_call_update, call_pk=call.pk, hook_decisions=call.hook_decisions)
        await self.sink.emit("tool-hook", toolCallId=call.id, toolName=call.name, **record)

    def _context(self, call: CallState, resume: Any, first: bool) -> Any:
        from tools_app.execution import ExecutionContext

        sink = self.sink

        async def writer(event: dict[str, Any]) -> None:
            await sink.emit("custom", toolCallId=call.id, toolName=call.name, data=event)

        async def before(value: Any) -> Any:
            return await self._gate(call, first, resume)

        async def after(output: Any, error: str) -> tuple[Any, str]:
            return await self._after_hook(call, output, error)

        return ExecutionContext(
            user=self.setup.user,
            run=self.setup.run,
            thread=self.setup.run.thread,
            tool_call=call.pk,
            call_id=call.id,
            abort=self.active.abort,
            writer=writer,
            resume_payload=resume,
            before=before,
            after=after,
        )

    async def _succeed(
        self,
        call: CallState,
        output: Any,
        model_output: Any,
        status: str = ToolCallStatus.COMPLETED,
        skipped: bool = False,
        duration: float | None = None,
        extra: dict[str, Any] | None = None,
    ) -> None:
        transform = getattr(call.spec.definition, "transform", None) if call.spec else None
        shown = self._display(call, transform, output, "output")
        hidden = transform is not None and shown is None and output is not None and call.hidden
        await db(
            store.tool_result_save,
            run_id=self.run_id,
            thread_id=self.setup.thread_id,
            call_pk=call.pk,
            call_id=call.id,
            name=call.name,
            status=status,
            output=output,
            model_output=model_output,
            display=None if hidden else shown,
            hook_decisions=call.hook_decisions,
            model_visible=transform is None,
        )
        fields: dict[str, Any] = {
            "output": None if hidden else shown,
            "hookDecisions": call.hook_decisions,
        }
        if model_output != output and transform is None:
            fields["modelOutput"] = model_output
        if hidden:
            fields["hidden"] = True
        if skipped:
            fields["skipped"] = True
        if duration is not None:
            fields["durationMs"] = duration
        observers.notify(
            "tool_call_finished",
            self.run_id,
            call_id=call.id,
            status=status,
            output=fields["output"],
            model_output=model_output if transform is None else None,
        )
        await self.sink.emit(
            "tool-result", toolCallId=call.id, toolName=call.name, **fields, **(extra or {})
        )
        _lifecycle(
            call.spec, "on_output", {"toolCallId": call.id, "toolName": call.name, "output": output}
        )
        if (
            call.spec is not None
            and call.spec.definition is not None
            and ((call.spec.definition.config or {}).get("emits") == "task-list")
        ):
            await self._task_list()
        return None

    async def _fail(
        self, call: CallState, error: str, errors: list | None = None, output: Any = None
    ) -> None:
        model_output: dict[str, Any] = {"error": error}
        if errors:
            model_output["errors"] = errors
        observers.notify(
            "tool_call_finished", self.run_id, call_id=call.id, status="failed", error=error
        )
        await db(
            store.tool_result_save,
            run_id=self.run_id,
            thread_id=self.setup.thread_id,
            call_pk=call.pk,
            call_id=call.id,
            name=call.name,
            status=ToolCallStatus.FAILED,
            output=output,
            model_output=model_output,
            display=None,
            error=error,
            hook_decisions=call.hook_decisions,
        )
        await self.sink.emit(
            "tool-error",
            toolCallId=call.id,
            toolName=call.name,
            error=error,
            hookDecisions=call.hook_decisions,
            **({"errors": errors} if errors else {}),
        )
        return None

    async def _task_list(self) -> None:
        from tools_app.agent_side import agent_side_get

        tasks = await db(lambda: agent_side_get().task_list(self.setup.thread_id).items())
        await self.sink.emit("task-list", tasks=tasks)

    async def _enqueue_async(self, call: CallState) -> None:
        from agents_core.services.async_tools import tool_call_enqueue_async

        pending = {"status": "pending"}
        # The call's span is stored before a worker can finish it (it closes the span).
        observers.notify("tool_call_pending", self.run_id, call_id=call.id)
        await observers.flush(self.run_id)
        await db(
            tool_call_enqueue_async,
            call_pk=call.pk,
            user=self.setup.user,
            pending={
                "run_id": self.run_id,
                "thread_id": self.setup.thread_id,
                "call_id": call.id,
                "name": call.name,
                "output": None,
                "model_output": pending,
                "display": pending,
                "hook_decisions": call.hook_decisions,
            },
        )
        await self.sink.emit(
            "tool-call-pending", toolCallId=call.id, toolName=call.name, output=pending
        )
        return None

    # --- suspension ------------------------------------------------------------------------
    async def _suspend(
        self, call: CallState, payload: dict[str, Any], remaining: list[str]
    ) -> None:
        state = {
            "step": self.step,
            "suspendedCallId": call.id,
            "remaining": remaining,
            "kind": suspend_kind(payload),
        }
        observers.notify(
            "suspended", self.run_id, call_id=call.id, name=call.name, kind=state["kind"]
        )
        await db(
            store.run_suspend_save,
            run_id=self.run_id,
            call_pk=call.pk,
            payload=payload,
            state=state,
            hook_decisions=call.hook_decisions,
        )
        await self.sink.emit(
            "tool-call-suspended",
            toolCallId=call.id,
            toolName=call.name,
            suspendPayload=payload,
            resumeSchema=resume_schema_for(call.spec, payload),
            autoResume=bool(self.setup.options.get("autoResume")),
            hookDecisions=call.hook_decisions,
        )

    async def _resume(self, resume: dict[str, Any]) -> bool:
        """Finish the suspended step; True when it suspended again."""
        rows = await db(store.step_calls, run_id=self.run_id, step=self.step)
        suspended_id = resume["toolCallId"]
        calls = []
        for row in rows:
            spec = self.setup.specs.get(row.tool_name)
            call = CallState(
                index=len(calls),
                id=row.call_id,
                name=row.tool_name,
                spec=spec,
                input=row.input,
                pk=row.pk,
                ended=True,
                hook_decisions=list(row.hook_decisions or []),
            )
            calls.append((call, row))
        for position, (call, row) in enumerate(calls):
            if call.id == suspended_id:
                payload = row.resume_payload
                observers.notify("resumed", self.run_id, call_id=call.id)
                await self.sink.emit(
                    "tool-call-resumed", toolCallId=call.id, toolName=call.name, payload=payload
                )
                kind = suspend_kind(row.suspend_payload or {})
                if kind == "approval":
                    if not payload.get("approved"):
                        reason = payload.get("reason") or "no reason given"
                        await self._fail(call, f"The user declined this call: {reason}")
                        suspended = None
                    else:
                        suspended = await self._execute(call, approved=True)
                elif kind == "client-function":
                    resume_value = (
                        payload.get("output")
                        if "error" not in payload
                        else {"__client_error__": payload["error"]}
                    )
                    suspended = await self._execute(
                        call, resume=resume_value if resume_value is not None else {}
                    )
                else:
                    suspended = await self._execute(call, resume=payload)
            elif row.finished_at is None and row.status == ToolCallStatus.RUNNING:
                suspended = await self._execute(call)
            else:
                continue
            if suspended is not None:
                rest = [c.id for c, _ in calls[position + 1 :]]
                await self._suspend(call, suspended, rest)
                return True
        return False


_imported: set[str] = set()


async def _litellm(*, offline: bool) -> Any:
    """litellm, imported in a thread the first time: the import takes seconds, and the
    event loop serves every websocket of the process meanwhile. Imported through the import
    system until it has been once here (not looked up in sys.modules): a module another
    thread is still importing (runstudio's warm-up) is there half made, and the import
    waits for it to be whole."""
    import importlib
    import sys

    from agents_core.runtime.worker import uses_workers

    for name in ("litellm", *(("agents_core.runtime.offline",) if offline else ())):
        if name not in _imported:
            await asyncio.to_thread(importlib.import_module, name)
            _imported.add(name)
    if not uses_workers():
        heap.settle()  # a web process executing runs inline (once): see runtime/heap.py
    return sys.modules["litellm"]


async def execute_run(run_id: Any, *, abort: asyncio.Event | None = None) -> RunResult:
    """Execute (or continue) a run to its end, suspension or failure."""
    run_id = str(run_id)
    setup = await db(load_setup, run_id)
    if setup.run.status != RunStatus.RUNNING:
        return RunResult(setup.run.status)
    loop = asyncio.get_running_loop()
    active = active_runs.ActiveRun(
        run_id=run_id,
        abort=abort or asyncio.Event(),
        loop=loop,
        hooks=active_runs.take_hooks(run_id),
    )
    active.task = asyncio.current_task()
    active_runs.register(active)
    sink = EventSink(thread_id=setup.thread_id, run_id=run_id)
    active_runs.watch_aborts(loop)
    try:
        result = await Runner(setup, sink, active).run()
        await sink.close()
    finally:
        await observers.flush(run_id)
        active_runs.unregister(run_id)
        stats.dump()
    await db(_signals_on_run_end, setup.run)
    return result


def _signals_drain(run: Any) -> list[str]:
    try:
        from agents_core.signals.services import signals_drain_for_run
    except ImportError:
        return []
    return signals_drain_for_run(run)


def _signals_on_run_end(run: Any) -> None:
    try:
        from agents_core.signals.services import signals_on_run_end
    except ImportError:
        return
    try:
        run.refresh_from_db()
        signals_on_run_end(run)
    except Exception:  # noqa: BLE001 - the run itself is over; log, do not fail it
        logger.exception("signals_on_run_end failed for run %s", run.pk)
