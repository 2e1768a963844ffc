"""The agent loop: call the model, stream, run the tool calls, repeat until no tool calls
remain or the steps run out; suspend on a call that waits for an answer, resume with it.

`execute_run(run_id)` is the whole run as one coroutine. It reads and writes the database
through runtime.db, publishes through an EventSink, and needs nothing from the process
that started it: a run resumed after a restart is rebuilt from its rows (Run.state names
the suspended call and its step). `Runner.run` is the loop itself. It composes the run's
parts, each given the run's shared context (run_context.py) and owning its own state:
the model step (model_step.py, with the streamed tool input of tool_input.py), the tool
calls (tool_calls.py) and suspension and resume (suspension.py, which runs the resumed
calls through the tool calls). The run's state moves are services/runs.py's.
"""

from __future__ import annotations

import asyncio
import logging
from dataclasses import dataclass
from typing import Any

from agents_core.models import RunStatus
from agents_core.runtime.bus.events import EventSink
from agents_core.runtime.execution import active as active_runs
from agents_core.runtime.execution import stats
from agents_core.runtime.run import observers, plugins
from agents_core.runtime.run.errors import Aborted
from agents_core.runtime.run.model_step import ModelStep
from agents_core.runtime.run.run_context import RunContext
from agents_core.runtime.run.setup import RunSetup, load_setup
from agents_core.runtime.run.suspension import Suspension
from agents_core.runtime.run.tool_calls import ToolCalls
from agents_core.runtime.run.tool_input import CallState
from agents_core.runtime.storage.db import db
from agents_core.services.runs import run_finish
from providers.errors import ModelError
from tools_app.redaction import Secrets, redact, secrets_scope

logger = logging.getLogger(__name__)


@dataclass
class RunResult:
    status: str
    text: str = ""
    error: str = ""


class Runner:
    """One run's loop over its collaborators: the model step, the tool calls, suspension."""

    def __init__(self, setup: RunSetup, sink: EventSink, active: active_runs.ActiveRun) -> None:
        self.ctx = RunContext(
            setup=setup, sink=sink, active=active, run_id=str(setup.run.id), step=setup.run.step
        )
        self.setup, self.sink, self.run_id = setup, sink, self.ctx.run_id
        self.model = ModelStep(self.ctx)
        self.tool_calls = ToolCalls(self.ctx)
        self.suspension = Suspension(self.ctx, self.tool_calls)

    async def run(self) -> RunResult:
        """Start (or resume), then a model step and its tool calls, again, until the model
        answers without calls, the steps run out or a call suspends the run."""
        try:
            if await self._start():
                return RunResult(RunStatus.SUSPENDED)
            while self.ctx.step < self.setup.max_steps:
                self.ctx.step += 1
                calls, finish_reason = await self.model.call()
                if not calls:
                    await self._step_finish(finish_reason)
                    return await self._finish(finish_reason)
                if await self._execute_calls(calls):
                    return RunResult(RunStatus.SUSPENDED)
                await self._step_finish("tool-calls")
                await observers.flush(self.run_id, wait=False)
            return await self._finish("max-steps")
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

    async def _execute_calls(self, calls: list[CallState]) -> bool:
        """Run the calls of a step in order; True when one suspended the run."""
        for position, call in enumerate(calls):
            self.ctx.check_abort()
            payload = await self.tool_calls.execute(call)
            if payload is not None:
                remaining = [c.id for c in calls[position + 1 :]]
                await self.suspension.suspend(call, payload, remaining)
                return True
        return False

    async def _start(self) -> bool:
        """A resumed run's `run-start` (a new run's is stored with its row by `run_start`),
        then it first finishes its suspended step (True: it suspended again)."""
        state = self.setup.run.state or {}
        agent, resume = self.setup.agent.slug, state.get("resume")
        observers.notify(
            "run_started",
            self.run_id,
            agent=agent,
            model=self.setup.agent.model,
            resumed=bool(resume),
            step=self.ctx.step,
        )
        if not resume:
            return False
        await self.sink.emit("run-start", agent=agent, resumed=True, step=self.ctx.step)
        if await self.suspension.resume(resume):
            return True
        await self._step_finish("tool-calls")
        return False

    async def _step_finish(self, reason: str) -> None:
        await self.sink.emit(
            "step-finish", step=self.ctx.step, finishReason=reason, usage=self.model.usage
        )

    async def _finish(self, reason: str) -> RunResult:
        observers.notify(
            "run_finished",
            self.run_id,
            status=RunStatus.COMPLETED,
            usage=self.model.usage,
            steps=self.ctx.step,
        )
        await self.sink.release()  # stored: the thread's numbering is the database's again
        event = self.sink.base(
            "run-finish",
            status="completed",
            finishReason=reason,
            text=self.model.last_text,
            usage=self.model.usage,
            steps=self.ctx.step,
            model=self.model.answered,
        )
        # The run's end and its `run-finish`, stored in one transaction, then delivered.
        texts = await db(
            run_finish,
            run_id=self.run_id,
            status=RunStatus.COMPLETED,
            usage=self.model.usage,
            text=self.model.last_text,
            # Every call of the run's steps has its result: none is left open.
            calls_open=False,
            title=self.setup.run.thread.title_auto,
            thread_id=self.setup.thread_id,
            events=[event],
        )
        self.sink.delivered_stored(event, texts[0])
        return RunResult(RunStatus.COMPLETED, text=self.model.last_text)

    async def _end(self, run_status: str, event: str, **fields: Any) -> RunResult:
        # Where a run's failure becomes its error and its `run-error`: no secret of the
        # run's goes into either (a model error is redacted already; a crash may not be).
        error = redact(fields.get("error", ""))
        if error:
            fields["error"] = error
        observers.notify(
            "run_finished",
            self.run_id,
            status=run_status,
            usage=self.model.usage,
            steps=self.ctx.step,
            error=error,
        )
        try:
            await self.sink.release()
            final = self.sink.base(event, usage=self.model.usage, steps=self.ctx.step, **fields)
            texts = await db(
                run_finish,
                run_id=self.run_id,
                status=run_status,
                error=error,
                usage=self.model.usage,
                thread_id=self.setup.thread_id,
                partial_text=self.model.partial_text,
                message_id=self.model.step_message,
                model=self.model.answered,
                events=[final],
            )
            self.sink.failed = None
            self.sink.delivered_stored(final, texts[0])
        except Exception:  # noqa: BLE001
            logger.exception("Run %s: could not record its end", self.run_id)
        return RunResult(run_status, error=error)


async def execute_run(run_id: Any, *, abort: asyncio.Event | None = None) -> RunResult:
    """Execute (or continue) a run to its end, suspension or failure, in a scope of secrets
    (tools_app.redaction) that collects every value it decrypts or sends a key with."""
    with secrets_scope() as secrets:
        return await _execute(str(run_id), abort, secrets)


async def _execute(run_id: str, abort: asyncio.Event | None, secrets: Secrets) -> RunResult:
    await active_runs.messages_taken()
    setup = await db(load_setup, run_id)
    secrets.add_all(setup.secret_values())
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
    sink = EventSink(thread_id=setup.thread_id, run_id=run_id, owner=setup.run.worker or None)
    active_runs.watch_aborts(loop)
    try:
        result = await Runner(setup, sink, active).run()
        await sink.close()
    finally:
        await observers.flush(run_id)
        active_runs.unregister(run_id)
        stats.dump()
    await db(plugins.after_run, setup.run, result.status)
    return result
