"""Suspension: a call that waits for an answer (approval, ask-user, a client function)
suspends its run; the answer resumes the run, which finishes the suspended step's calls
before the loop goes on."""

from __future__ import annotations

from typing import Any

from agents_core.models import ToolCallStatus
from agents_core.runtime import observers, store
from agents_core.runtime.db import db
from agents_core.runtime.suspend_payloads import resume_schema_for, suspend_kind
from agents_core.runtime.tool_input import CallState
from agents_core.services.runs import run_suspend


class Suspension:
    """The Runner's part that suspends and resumes (runtime/loop.py)."""

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
        await self.sink.release()  # stored: the thread's numbering is the database's again
        await db(
            run_suspend,
            run_id=self.run_id,
            call_pk=call.pk,
            payload=payload,
            state=state,
            hooks=call.hook_decisions,
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
