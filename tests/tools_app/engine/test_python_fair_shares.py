"""Fair shares of the Python sandbox, through the real sandbox service process: one
owner's runs hold at most their share of the pool (the rest of their runs wait, first
come first served, and then run), another owner's run never waits behind them, a wait
is bounded and ends with a clear message, and the service runs nothing for a caller
without the shared secret nor above the operator's maxima."""

from __future__ import annotations

import asyncio
import subprocess
import sys
from collections.abc import Iterator
from typing import Any

import pytest
from asgiref.sync import async_to_sync
from django.test import override_settings

from tests.tools_app.engine.sandbox_procs import sandbox_processes
from tests.tools_app.engine.sandbox_service import (
    HOG,
    MODULE,
    ROOT,
    ServiceProcess,
    sandbox_service,
    stopped,
)
from tests.tools_app.engine.test_python_isolation import until
from tools_app.execution import ExecutionContext, ToolOutcome, run_tool
from tools_app.types.python import isolation_status, run_limits

NAP = "import time\nstarted = time.time()\ntime.sleep(0.5)\nreturn [started, time.time()]"
SHARE_NOTE = (
    "Waiting for a sandbox slot: your runs hold your share of 2 at once; this one starts "
    "when one of them ends."
)


@pytest.fixture
def service() -> Iterator[ServiceProcess]:
    """The service with 4 slots, 2 per owner, no spare started ahead (a run starts only
    when one is asked for), and the studio pointed at it with the shared secret."""
    flags = ("--pool-size", "4", "--owner-slots", "2", "--spares", "0")
    with (
        sandbox_service(*flags) as running,
        override_settings(STUDIO_SANDBOX_URL=running.url, STUDIO_SANDBOX_TOKEN=running.token),
    ):
        yield running


class Watched:
    """A run's context that keeps what the run was told while it waited."""

    def __init__(self, user: Any) -> None:
        self.notes: list[str | None] = []
        self.context = ExecutionContext(user=user, on_wait=self.heard)

    async def heard(self, note: str | None) -> None:
        self.notes.append(note)


def start(tool: Any, user: Any) -> tuple[Watched, asyncio.Future[ToolOutcome]]:
    watched = Watched(user)
    return watched, asyncio.ensure_future(run_tool(tool, {}, watched.context))


def test_one_users_runs_never_make_another_users_run_wait(service, python_tool, owner, teammate):
    hog = python_tool(HOG, owner=owner, timeout_seconds=60)
    quick = python_tool("return input.get('n', 1) * 2", owner=teammate)

    async def scenario() -> tuple[ToolOutcome, Watched, list[Watched], bool]:
        hogs = [start(hog, owner) for _ in range(4)]
        # Two of the owner's four runs hold their share; the other two wait behind them.
        await until(lambda: sum(bool(w.notes) for w, _ in hogs) == 2)
        other = Watched(teammate)
        outcome = await run_tool(quick, {"n": 21}, other.context)
        all_still_there = not any(task.done() for _, task in hogs)
        await stopped([task for _, task in hogs])
        return outcome, other, [w for w, _ in hogs], all_still_there

    outcome, other, hogs, all_still_there = async_to_sync(scenario)()

    assert outcome.status == "completed", outcome.error
    assert outcome.output == 42
    assert other.notes == []  # it never waited
    assert all_still_there  # while all four of the owner's runs were held or queued
    assert sorted(tuple(w.notes) for w in hogs) == [(), (), (SHARE_NOTE,), (SHARE_NOTE,)]


def test_a_users_runs_beyond_their_share_wait_then_run(service, python_tool, owner):
    nap = python_tool(NAP, owner=owner)

    async def scenario() -> list[tuple[Watched, ToolOutcome]]:
        runs = [start(nap, owner) for _ in range(3)]
        return [(watched, await task) for watched, task in runs]

    runs = async_to_sync(scenario)()

    assert [outcome.status for _, outcome in runs] == ["completed"] * 3
    # The one that came after the share was taken heard why it waited, then that it ran.
    heard = sorted(tuple(watched.notes) for watched, _ in runs)
    assert heard == [(), (), (SHARE_NOTE, None)]
    spans = [outcome.output for _, outcome in runs]
    waited = next(outcome.output for watched, outcome in runs if watched.notes)
    assert waited[0] >= min(span[1] for span in spans if span != waited)


@override_settings(STUDIO_SANDBOX_QUEUE_WAIT=1)
def test_a_run_that_waits_past_the_queue_timeout_fails_with_a_clear_message(
    service, python_tool, owner
):
    hog = python_tool(HOG, owner=owner, timeout_seconds=60)

    async def scenario() -> tuple[ToolOutcome, list[str | None]]:
        runs = [start(hog, owner) for _ in range(3)]
        done, pending = await asyncio.wait(
            [task for _, task in runs], return_when=asyncio.FIRST_COMPLETED
        )
        first = done.pop()
        await stopped(list(pending))
        return first.result(), next(w.notes for w, task in runs if task is first)

    outcome, notes = async_to_sync(scenario)()

    assert outcome.status == "failed"
    assert outcome.error == (
        "Waited 1 s for a sandbox slot: your other runs held your share of 2 slots all that "
        "time, so this run did not start. Try again later."
    )
    assert notes == [SHARE_NOTE]


def test_an_unauthenticated_request_gets_401_and_runs_nothing(service, python_tool, owner):
    body = {"code": HOG, "timeout": 30, "tenant": "x", "limits": run_limits().as_dict()}

    for token in ("", "not-the-secret", service.token + "x"):
        status, answer = service.call("/run", body, token=token)
        assert (status, answer) == (401, {"error": "unauthenticated"}), token
        assert sandbox_processes(under=service.proc.pid) == []
    status, _ = service.call("/status", {"limits": run_limits().as_dict()}, token="wrong")
    assert status == 401

    # The studio with another secret gets a failed run that says why.
    with override_settings(STUDIO_SANDBOX_TOKEN="not-the-secret"):
        outcome = async_to_sync(run_tool)(python_tool("return 1"), {}, ExecutionContext(user=owner))
    assert outcome.status == "failed"
    assert outcome.error == "The sandbox service answered 401: unauthenticated"


def test_the_service_refuses_to_start_without_a_secret():
    env = {"PATH": "/usr/bin:/bin", "PYTHONPATH": str(ROOT)}
    ended = subprocess.run(  # noqa: S603 - this checkout's own module
        [sys.executable, "-m", MODULE, "--port", "0"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )

    assert ended.returncode == 1
    assert "set STUDIO_SANDBOX_TOKEN or STUDIO_SANDBOX_TOKEN_FILE" in ended.stderr


@pytest.mark.parametrize(
    ("changes", "error"),
    [
        (
            {"memory_mb": 1024},
            "limits.memory_mb: 1024 is above this sandbox service's maximum of 512 MB",
        ),
        (
            {"pids": 300},
            "limits.pids: 300 is above this sandbox service's maximum of 256 processes",
        ),
        ({"cpus": 0}, "limits.cpus: no cap is above this sandbox service's maximum of 2 CPUs"),
        (
            {"output_mb": 64},
            "limits.output_mb: 64 is above this sandbox service's maximum of 16 MB",
        ),
        (
            {"max_timeout": 300},
            "limits.max_timeout: 300 is above this sandbox service's maximum of 20 s",
        ),
    ],
)
def test_a_request_above_the_operators_maxima_is_refused_with_400(changes, error):
    limits = {**run_limits().as_dict(), "max_timeout": 20, **changes}
    with sandbox_service(
        "--max-memory-mb", "512", "--max-timeout", "20", "--spares", "0"
    ) as service:
        status, answer = service.call("/run", {"code": HOG, "timeout": 5, "limits": limits})
        status_of_status, _ = service.call("/status", {"limits": limits})
        assert sandbox_processes(under=service.proc.pid) == []

    assert (status, status_of_status) == (400, 400)
    assert answer["error"] == f"bad request: {error} (its --max-* flags)"


@override_settings(STUDIO_SANDBOX_MAX_TIMEOUT=20)
def test_a_timeout_above_the_maximum_is_refused_and_the_console_says_why(python_tool, owner):
    flags = ("--max-timeout", "20", "--max-memory-mb", "512", "--spares", "0")
    with sandbox_service(*flags) as service:
        limits = {**run_limits().as_dict()}
        status, answer = service.call("/run", {"code": HOG, "timeout": 25, "limits": limits})
        with override_settings(
            STUDIO_SANDBOX_URL=service.url,
            STUDIO_SANDBOX_TOKEN=service.token,
            STUDIO_SANDBOX_MEMORY_MB=1024,
        ):
            badge = isolation_status()
            outcome = async_to_sync(run_tool)(
                python_tool("return 1"), {}, ExecutionContext(user=owner)
            )

    assert status == 400
    assert answer["error"] == (
        "bad request: timeout: 25 is above this sandbox service's maximum of 20 s "
        "(its --max-* flags)"
    )
    too_much = "limits.memory_mb: 1024 is above this sandbox service's maximum of 512 MB"
    assert too_much in badge["refusal"]
    assert outcome.status == "failed" and too_much in outcome.error
