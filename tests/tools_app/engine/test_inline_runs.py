"""A fast sync code tool runs on its caller's thread once it has shown it is fast, with its
timeout kept by the watchdog (tools_app/deadlines.py, tools_app/types/code/pace.py)."""

from __future__ import annotations

import asyncio
import threading
import time

import pytest

from agents_core.definitions import create_tool
from tools_app.execution import ExecutionContext, run_tool, run_tool_sync
from tools_app.models import ToolRun
from tools_app.services.execute import tool_execute
from tools_app.types.code.pace import PROBATION, pace_of

SCHEMA = {"type": "object", "properties": {"mode": {"type": "string"}}, "required": ["mode"]}


class Probe:
    """A tool whose behaviour the test switches: its `execute` answers with the thread it
    ran on, spins past any timeout, raises, or queries the database."""

    def __init__(self) -> None:
        self.threads: list[int] = []

    def execute(self, data, context=None):
        self.threads.append(threading.get_ident())
        mode = data["mode"]
        if mode == "spin":  # pure Python: stopped at its deadline
            while True:
                pass
        if mode == "sleep":  # blocked in C: stopped when the sleep returns
            time.sleep(0.6)
        if mode == "raise":
            raise ValueError("the probe refused")
        if mode == "query":
            return {"tools": ToolRun.objects.count()}
        return {"mode": mode}


@pytest.fixture
def probe(code_tool):
    probe = Probe()
    definition = create_tool(
        id="engine_probe", description="x", execute=probe.execute, input_schema=SCHEMA, timeout=0.3
    )
    probe.definition = definition
    probe.tool = code_tool(definition)
    return probe


def _settle(probe: Probe) -> None:
    """Run it until it has shown it is fast (each probation run in a thread of its own)."""
    for _ in range(PROBATION):
        assert run_tool_sync(probe.tool, {"mode": "ok"}).ok
    assert pace_of(probe.definition).inline


def test_a_fast_sync_tool_moves_to_the_callers_thread_after_probation(probe):
    caller = threading.get_ident()

    for _ in range(PROBATION):
        assert run_tool_sync(probe.tool, {"mode": "ok"}).output == {"mode": "ok"}
    assert caller not in probe.threads  # each probation run had a thread of its own

    outcome = run_tool_sync(probe.tool, {"mode": "ok"})

    assert outcome.ok and outcome.output == {"mode": "ok"}
    assert probe.threads[-1] == caller


def test_an_inline_run_on_an_event_loop_stays_on_the_loops_thread(probe):
    _settle(probe)

    async def call():
        return threading.get_ident(), await run_tool(probe.tool, {"mode": "ok"})

    loop_thread, outcome = asyncio.run(call())

    assert outcome.ok and probe.threads[-1] == loop_thread


def test_a_sync_tool_that_overruns_inline_still_gets_a_timeout_error(probe, owner):
    _settle(probe)

    run = tool_execute(tool=probe.tool, input={"mode": "spin"}, user=owner)

    assert run.status == "failed"
    assert run.error == "The tool timed out after 0.3 s."
    assert ToolRun.objects.filter(id=run.id, status="failed").exists()
    assert probe.threads[-1] == threading.get_ident()  # it was inline, and was stopped
    assert not pace_of(probe.definition).inline  # back to threads, probation again
    assert run_tool_sync(probe.tool, {"mode": "ok"}).ok  # the caller's thread goes on


def test_a_tool_blocked_in_c_inline_times_out_when_the_call_returns(probe):
    _settle(probe)

    outcome = run_tool_sync(probe.tool, {"mode": "sleep"})

    assert outcome.status == "failed"
    assert outcome.error == "The tool timed out after 0.3 s."


def test_an_inline_tool_that_raises_records_its_error(probe, owner):
    _settle(probe)

    run = tool_execute(tool=probe.tool, input={"mode": "raise"}, user=owner)

    run.refresh_from_db()
    assert probe.threads[-1] == threading.get_ident()
    assert run.status == "failed"
    assert run.error == "ValueError: the probe refused"
    assert pace_of(probe.definition).inline  # an error is not slowness


@pytest.mark.django_db(transaction=True)
def test_a_tool_that_uses_the_database_keeps_a_thread_of_its_own(probe):
    caller = threading.get_ident()

    for _ in range(PROBATION + 2):
        assert run_tool_sync(probe.tool, {"mode": "query"}).ok

    assert caller not in probe.threads
    assert pace_of(probe.definition).needs_thread


@pytest.mark.django_db(transaction=True)
def test_an_inline_run_refused_the_orm_on_an_event_loop_runs_again_in_a_thread(probe):
    _settle(probe)

    async def call():
        return threading.get_ident(), await run_tool(probe.tool, {"mode": "query"})

    loop_thread, outcome = asyncio.run(call())

    assert outcome.ok, outcome.error  # Django refused the query on the loop's thread
    assert probe.threads[-2] == loop_thread and probe.threads[-1] != loop_thread
    assert pace_of(probe.definition).needs_thread


def test_a_context_with_steps_is_run_on_an_event_loop_as_before(probe):
    _settle(probe)
    seen = []

    async def before(value):
        seen.append(value)

    outcome = run_tool_sync(probe.tool, {"mode": "ok"}, ExecutionContext(before=before))

    assert outcome.ok and seen == [{"mode": "ok"}]


def test_a_tool_declared_not_inline_keeps_a_thread_of_its_own(code_tool):
    probe = Probe()
    tool = code_tool(
        create_tool(
            id="engine_blocking", description="x", execute=probe.execute, input_schema=SCHEMA,
            inline=False,
        )
    )  # fmt: skip

    for _ in range(PROBATION + 2):
        assert run_tool_sync(tool, {"mode": "ok"}).ok

    assert threading.get_ident() not in probe.threads


def test_an_inline_run_that_needs_async_to_sync_runs_again_in_a_thread(code_tool):
    from asgiref.sync import async_to_sync

    calls = []

    async def answer():
        return {"ok": True}

    def execute(data, context=None):
        calls.append(threading.get_ident())
        if data["mode"] == "bridge":
            return async_to_sync(answer)()
        return {"ok": True}

    definition = create_tool(
        id="engine_bridge", description="x", execute=execute, input_schema=SCHEMA
    )
    tool = code_tool(definition)
    for _ in range(PROBATION):
        assert run_tool_sync(tool, {"mode": "ok"}).ok

    async def call():
        return threading.get_ident(), await run_tool(tool, {"mode": "bridge"})

    loop_thread, outcome = asyncio.run(call())

    assert outcome.ok and outcome.output == {"ok": True}, outcome.error
    assert calls[-2] == loop_thread and calls[-1] != loop_thread
    assert pace_of(definition).needs_thread


def test_a_forked_child_keeps_deadlines_with_a_watchdog_of_its_own():
    import os
    import signal

    from tools_app.deadlines import DeadlinePassed, call_with_deadline

    def spin():
        while True:
            pass

    assert call_with_deadline(lambda: "ok", (), 5) == "ok"  # the parent's watchdog runs
    pid = os.fork()
    if pid == 0:  # the child: a spin past its deadline must be stopped
        signal.alarm(10)  # without a watchdog the child fails here instead of hanging
        try:
            call_with_deadline(spin, (), 0.2)
        except DeadlinePassed:
            os._exit(0)
        os._exit(1)
    _, status = os.waitpid(pid, 0)

    assert os.waitstatus_to_exitcode(status) == 0
