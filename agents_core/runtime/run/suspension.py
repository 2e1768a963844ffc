"""Suspension: a call that waits for an answer (approval, ask-user, a client function)
suspends its run; the answer resumes the run, which finishes the suspended step's calls
before the loop goes on. `Suspension` runs the resumed step's calls through the run's
tool calls (runtime/run/tool_calls.py)."""

from __future__ import annotations

from typing import Any

from agents_core.models import ToolCallStatus
from agents_core.runtime.run import observers
from agents_core.runtime.run.run_context import RunContext
from agents_core.runtime.run.suspend_payloads import resume_schema_for, suspend_kind
from agents_core.runtime.run.tool_calls import ToolCalls
from agents_core.runtime.run.tool_input import CallState
from agents_core.runtime.storage import store
from agents_core.runtime.storage.db import db
from agents_core.services.runs import run_suspend


class Suspension:
    """A run's suspension and resume (runtime/run/loop.py calls `suspend` and `resume`)."""

    def __init__(self, ctx: RunContext, tool_calls: ToolCalls) -> None:
        self.ctx = ctx
        self.tool_calls = tool_calls

    async def suspend(self, call: CallState, payload: dict[str, Any], remaining: list[str]) -> None:
        """Keep the run's state (the step, the call and the calls after it) and stop."""
        ctx = self.ctx
        state = {
            "step": ctx.step,
            "suspendedCallId": call.id,
            "remaining": remaining,
            "kind": suspend_kind(payload),
        }
        observers.notify(
            "suspended", ctx.run_id, call_id=call.id, name=call.name, kind=state["kind"]
        )
        await ctx.sink.release()  # stored: the thread's numbering is the database's again
        await db(
            run_suspend,
            run_id=ctx.run_id,
            call_pk=call.pk,
            payload=payload,
            state=state,
            hooks=call.hook_decisions,
        )
        await ctx.sink.emit(
            "tool-call-suspended",
            toolCallId=call.id,
            toolName=call.name,
            suspendPayload=payload,
            resumeSchema=resume_schema_for(call.spec, payload),
            autoResume=bool(ctx.setup.options.get("autoResume")),
            hookDecisions=call.hook_decisions,
        )

    async def resume(self, resume: dict[str, Any]) -> bool:
        """Finish the suspended step; True when it suspended again."""
        ctx, tool_calls = self.ctx, self.tool_calls
        rows = await db(store.step_calls, run_id=ctx.run_id, step=ctx.step)
        suspended_id = resume["toolCallId"]
        calls: list[tuple[CallState, Any]] = []
        for row in rows:
            spec = ctx.setup.specs.get(row.tool_name)
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
                payload: dict[str, Any] = row.resume_payload or {}
                observers.notify("resumed", ctx.run_id, call_id=call.id)
                await ctx.sink.emit(
                    "tool-call-resumed", toolCallId=call.id, toolName=call.name, payload=payload
                )
                kind = suspend_kind(row.suspend_payload or {})
                if kind == "approval":
                    if not payload.get("approved"):
                        reason = payload.get("reason") or "no reason given"
                        await tool_calls.fail(call, f"The user declined this call: {reason}")
                        suspended = None
                    else:
                        suspended = await tool_calls.execute(call, approved=True)
                elif kind == "client-function":
                    resume_value = (
                        payload.get("output")
                        if "error" not in payload
                        else {"__client_error__": payload["error"]}
                    )
                    suspended = await tool_calls.execute(
                        call, resume=resume_value if resume_value is not None else {}
                    )
                else:
                    suspended = await tool_calls.execute(call, resume=payload)
            elif row.finished_at is None and row.status == ToolCallStatus.RUNNING:
                suspended = await tool_calls.execute(call)
            else:
                continue
            if suspended is not None:
                rest = [c.id for c, _ in calls[position + 1 :]]
                await self.suspend(call, suspended, rest)
                return True
        return False
