"""The tool calls of a step, in order: validation, the before/after hooks, approval, the
tool itself (tools_app), a sub-agent's nested run, an async tool handed to a worker; each
ends with its result or error in the transcript and on the stream."""

from __future__ import annotations

import asyncio
import inspect
from typing import Any

from agents_core.models import RunStatus, ToolCallStatus
from agents_core.runtime import store
from agents_core.runtime.api import subagent_run
from agents_core.runtime.db import db
from agents_core.runtime.task_tools import task_list_data
from agents_core.runtime.tool_input import CallState, lifecycle
from agents_core.services.async_tools import tool_call_enqueue_async
from tools_app.execution import ExecutionContext, apply_model_output, run_tool, schema_errors


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
    """The Runner's part that executes tool calls (runtime/loop.py)."""

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
        """One call from validation to result; returns a suspend payload when it waits."""
        spec = call.spec
        if spec is None:
            known = ", ".join(sorted(self.setup.specs)) or "none"
            return await self._fail(call, f"Unknown tool {call.name!r}. Tools: {known}.")
        if call.input_error:
            return await self._fail(call, call.input_error)
        if resume is None and not approved:
            errors = schema_errors(spec.parameters, call.input)
            if errors:
                first = errors[0]
                return await self._fail(
                    call,
                    f"Input does not match the tool's input schema: {first['path']}: "
                    f"{first['message']}",
                    errors=errors,
                )
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
                output = decision.get("output")
                return await self._succeed(
                    call, output, output, status=ToolCallStatus.SKIPPED, skipped=True
                )
            if spec.requires_approval:
                return {
                    "kind": "approval",
                    "tool": call.name,
                    "input": call.input,
                    "question": f"Allow the call to {call.name}?",
                }
        if spec.kind == "subagent":
            return await self._subagent(call)
        if spec.execution_mode == "async" and resume is None:
            return await self._enqueue_async(call)
        return await self._run_tool(call, resume)

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
        if hook is None:
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
        await db(store.tool_call_update, call_pk=call.pk, hook_decisions=call.hook_decisions)
        await self.sink.emit("tool-hook", toolCallId=call.id, toolName=call.name, **record)

    def _context(self, call: CallState, resume: Any) -> Any:
        sink = self.sink

        async def writer(event: dict[str, Any]) -> None:
            await sink.emit("custom", toolCallId=call.id, toolName=call.name, data=event)

        return ExecutionContext(
            user=self.setup.user,
            run=self.setup.run,
            thread=self.setup.run.thread,
            tool_call=call.pk,
            abort=self.active.abort,
            writer=writer,
            resume_payload=resume,
        )

    async def _run_tool(self, call: CallState, resume: Any) -> dict[str, Any] | None:
        spec = call.spec
        if isinstance(resume, dict) and resume.get("__client_error__"):
            return await self._fail(call, str(resume["__client_error__"]))
        outcome = await run_tool(spec.tool, call.input, self._context(call, resume))
        self._check_abort()
        if outcome.status == "suspended":
            return outcome.suspend_payload or {"kind": "suspended"}
        output, error = outcome.output, outcome.error if outcome.status != "completed" else ""
        output, error = await self._after_hook(call, output, error)
        if error:
            return await self._fail(call, error, errors=outcome.errors, output=output)
        if output is outcome.output:
            model_output = outcome.model_output
        else:
            # An after hook replaced the output: the model sees the new one, mapped the same way.
            try:
                model_output = apply_model_output(spec.tool, output)
            except Exception as exc:  # noqa: BLE001
                return await self._fail(call, f"to_model_output failed: {exc}", output=output)
        return await self._succeed(call, output, model_output, duration=outcome.duration_ms)

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
        await self.sink.emit(
            "tool-result", toolCallId=call.id, toolName=call.name, **fields, **(extra or {})
        )
        lifecycle(
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
        tasks = await db(task_list_data, self.setup.thread_id)
        await self.sink.emit("task-list", tasks=tasks)

    async def _enqueue_async(self, call: CallState) -> None:
        pending = {"status": "pending"}
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

    async def _subagent(self, call: CallState) -> None:
        prompt = (call.input or {}).get("prompt", "")
        result, thread_id, run_id = await subagent_run(
            child=call.spec.child,
            prompt=prompt,
            user=self.setup.user,
            parent_thread_id=self.setup.thread_id,
            parent_run_id=self.run_id,
            tool_call_id=call.id,
            abort=self.active.abort,
        )
        self._check_abort()
        links = {
            "subagent": {
                "agent": call.spec.child.slug,
                "threadId": str(thread_id),
                "runId": str(run_id),
            }
        }
        if result.status != RunStatus.COMPLETED:
            reason = result.error or f"the sub-agent's run ended as {result.status}"
            output, error = await self._after_hook(
                call, None, f"agent-{call.spec.child.slug} did not answer: {reason}"
            )
            if error:
                return await self._fail(call, error)
        else:
            output, error = await self._after_hook(call, result.text, "")
            if error:
                return await self._fail(call, error)
        return await self._succeed(call, output, output, extra=links)
