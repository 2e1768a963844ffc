"""The tool calls of a step, in order. Each goes through tools_app's `run_tool`, which
validates, gates, executes and maps; the gate and the after step it calls back are the
run's (the `tool-call` event, the before hooks, approval, deferring an async tool to a
worker; the after hooks). Each call ends with its result or error in the transcript and
on the stream, or returns the payload it suspends the run with (runtime/run/suspension.py
keeps it). After a result, a tool's `result_events` hook (tools_app.definitions) names
the events the run emits next (the task tools' `task-list`)."""

from __future__ import annotations

import asyncio
import inspect
from typing import Any

from agents_core.models import ToolCallStatus
from agents_core.runtime.run import observers
from agents_core.runtime.run.run_context import RunContext
from agents_core.runtime.run.setup import ToolSpec
from agents_core.runtime.run.tool_input import CallState, display, display_input, kind, lifecycle
from agents_core.runtime.storage import store
from agents_core.runtime.storage.db import db
from agents_core.services.async_tools import tool_call_enqueue_async
from tools_app.execution import (
    DEFERRED,
    SKIPPED,
    SUSPENDED,
    ExecutionContext,
    Gate,
    run_tool,
)


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


class ToolCalls:
    """A run's tool calls, one at a time (runtime/run/loop.py and runtime/run/suspension.py call
    `execute` and `fail`), with the run's before and after hooks."""

    def __init__(self, ctx: RunContext) -> None:
        self.ctx = ctx
        # The agent's hooks, and the run's own (Python callables) over them.
        self.hooks = {**ctx.setup.hooks, **ctx.active.hooks}

    async def execute(
        self, call: CallState, resume: Any = None, approved: bool = False
    ) -> dict[str, Any] | None:
        """One call through run_tool, which validates, gates, executes and maps; returns a
        suspend payload when the call waits."""
        ctx = self.ctx
        spec = call.spec
        if observers.active():
            observers.notify(
                "tool_call_started",
                ctx.run_id,
                call_id=call.id,
                name=call.name,
                input=display_input(call),
                kind=kind(spec),
                mode=spec.execution_mode if spec is not None else "sync",
                resumed=resume is not None or approved,
            )
        if spec is None:
            known = ", ".join(sorted(ctx.setup.specs)) or "none"
            await self.fail(call, f"Unknown tool {call.name!r}. Tools: {known}.")
            return None
        if call.input_error:
            await self.fail(call, call.input_error)
            return None
        if isinstance(resume, dict) and resume.get("__client_error__"):
            await self.fail(call, str(resume["__client_error__"]))
            return None
        first = resume is None and not approved
        context = self._context(call, spec, resume, first)
        outcome = await run_tool(spec.runnable(), call.input, context)
        observers.notify(
            "tool_executed",
            ctx.run_id,
            call_id=call.id,
            isolation=outcome.isolation,
            duration_ms=outcome.duration_ms,
        )
        ctx.check_abort()
        if outcome.status == DEFERRED:
            await self._enqueue_async(call)
            return None
        if outcome.status == SUSPENDED:
            return outcome.suspend_payload or {"kind": "suspended"}
        if outcome.status == SKIPPED:
            await self._succeed(
                call,
                context,
                outcome.output,
                outcome.output,
                status=ToolCallStatus.SKIPPED,
                skipped=True,
            )
            return None
        if not outcome.ok:
            await self.fail(call, outcome.error, errors=outcome.errors, output=outcome.output)
            return None
        await self._succeed(
            call,
            context,
            outcome.output,
            outcome.model_output,
            duration=outcome.duration_ms,
            extra=outcome.links or None,
        )
        return None

    async def _gate(self, call: CallState, spec: ToolSpec, first: bool, resume: Any) -> Gate | None:
        """Between validation and execution: on a call's first pass the `tool-call` event,
        the before hooks and the approval; an async tool is deferred to a worker."""
        given = call.input
        if first:
            transform = getattr(spec.definition, "transform", None)
            shown = display(call, transform, call.input, "input")
            await self.ctx.sink.emit(
                "tool-call",
                toolCallId=call.id,
                toolName=call.name,
                input=None if call.hidden else shown,
                step=self.ctx.step,
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
            "runId": self.ctx.run_id,
            "threadId": str(self.ctx.setup.thread_id),
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
        if hook is None or self.ctx.active.abort.is_set():
            return output, error
        info = {
            "toolCallId": call.id,
            "toolName": call.name,
            "input": call.input,
            "output": output,
            "error": error or None,
            "runId": self.ctx.run_id,
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
        return "run" if key in self.ctx.active.hooks else "agent"

    async def _hook_event(self, call: CallState, record: dict[str, Any]) -> None:
        call.hook_decisions.append(record)
        observers.notify("hook_decision", self.ctx.run_id, call_id=call.id, record=record)
        await db(store.tool_call_update, call_pk=call.pk, hook_decisions=call.hook_decisions)
        await self.ctx.sink.emit("tool-hook", toolCallId=call.id, toolName=call.name, **record)

    def _context(
        self, call: CallState, spec: ToolSpec, resume: Any, first: bool
    ) -> ExecutionContext:
        sink = self.ctx.sink

        async def writer(event: dict[str, Any]) -> None:
            await sink.emit("custom", toolCallId=call.id, toolName=call.name, data=event)

        async def on_wait(note: str | None) -> None:
            # The call waits for a sandbox slot (note: why), or runs again (None).
            await sink.emit("tool-call-waiting", toolCallId=call.id, toolName=call.name, note=note)

        async def before(value: Any) -> Gate | None:
            return await self._gate(call, spec, first, resume)

        async def after(output: Any, error: str) -> tuple[Any, str]:
            return await self._after_hook(call, output, error)

        return ExecutionContext(
            user=self.ctx.setup.user,
            run=self.ctx.setup.run,
            thread=self.ctx.setup.run.thread,
            tool_call=call.pk,
            call_id=call.id,
            abort=self.ctx.active.abort,
            writer=writer,
            on_wait=on_wait,
            resume_payload=resume,
            before=before,
            after=after,
        )

    async def _succeed(
        self,
        call: CallState,
        context: ExecutionContext,
        output: Any,
        model_output: Any,
        status: str = ToolCallStatus.COMPLETED,
        skipped: bool = False,
        duration: float | None = None,
        extra: dict[str, Any] | None = None,
    ) -> None:
        transform = getattr(call.spec.definition, "transform", None) if call.spec else None
        shown = display(call, transform, output, "output")
        hidden = transform is not None and shown is None and output is not None and call.hidden
        await db(
            store.tool_result_save,
            run_id=self.ctx.run_id,
            thread_id=self.ctx.setup.thread_id,
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
            self.ctx.run_id,
            call_id=call.id,
            status=status,
            output=fields["output"],
            model_output=model_output if transform is None else None,
        )
        await self.ctx.sink.emit(
            "tool-result", toolCallId=call.id, toolName=call.name, **fields, **(extra or {})
        )
        lifecycle(
            call.spec, "on_output", {"toolCallId": call.id, "toolName": call.name, "output": output}
        )
        await self._result_events(call, context)

    async def _result_events(self, call: CallState, context: ExecutionContext) -> None:
        """The events a tool's `result_events` hook names after its result, in order."""
        hook = getattr(call.spec.definition, "result_events", None) if call.spec else None
        if hook is None:
            return
        for event in await db(hook, context):
            fields = dict(event)
            await self.ctx.sink.emit(fields.pop("type"), **fields)

    async def fail(
        self, call: CallState, error: str, errors: list | None = None, output: Any = None
    ) -> None:
        model_output: dict[str, Any] = {"error": error}
        if errors:
            model_output["errors"] = errors
        observers.notify(
            "tool_call_finished", self.ctx.run_id, call_id=call.id, status="failed", error=error
        )
        await db(
            store.tool_result_save,
            run_id=self.ctx.run_id,
            thread_id=self.ctx.setup.thread_id,
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
        await self.ctx.sink.emit(
            "tool-error",
            toolCallId=call.id,
            toolName=call.name,
            error=error,
            hookDecisions=call.hook_decisions,
            **({"errors": errors} if errors else {}),
        )

    async def _enqueue_async(self, call: CallState) -> None:
        pending = {"status": "pending"}
        # The call's span is stored before a worker can finish it (it closes the span).
        observers.notify("tool_call_pending", self.ctx.run_id, call_id=call.id)
        await observers.flush(self.ctx.run_id)
        await db(
            tool_call_enqueue_async,
            call_pk=call.pk,
            user=self.ctx.setup.user,
            pending={
                "run_id": self.ctx.run_id,
                "thread_id": self.ctx.setup.thread_id,
                "call_id": call.id,
                "name": call.name,
                "output": None,
                "model_output": pending,
                "display": pending,
                "hook_decisions": call.hook_decisions,
            },
        )
        await self.ctx.sink.emit(
            "tool-call-pending", toolCallId=call.id, toolName=call.name, output=pending
        )
