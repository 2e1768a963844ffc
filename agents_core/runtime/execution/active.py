"""Runs executing in this process, and how a run is started as an asyncio task.

A run lives apart from any connection: `launch(run_id)` schedules it on the process's
main event loop (Daphne's, or the test's), found through asgiref when called from a
`sync_to_async` thread (a view, a consumer's service call); with no such loop it uses a
background loop thread. With `settings.STUDIO_RUN_EXECUTOR = "worker"` a run worker process
claims it (runtime/execution/worker.py).

What executes a run is the run loop (`runtime.loop.execute_run`), which starts runs itself
(sub-agents, the signals a finished run leaves): it is handed to this module once, when the
app is ready (`set_executor`), so that starting a run does not import the loop.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import threading
from collections.abc import AsyncIterator, Callable, Coroutine
from dataclasses import dataclass, field
from typing import Any

from asgiref.sync import SyncToAsync

from agents_core.runtime.execution.processes import (
    RUN_ABORT,
    notify,
    process_beat,
    process_name,
    uses_workers,
    wake_workers,
)
from agents_core.runtime.storage import store
from agents_core.runtime.storage.db import db

logger = logging.getLogger(__name__)


@dataclass
class ActiveRun:
    run_id: str
    abort: asyncio.Event
    loop: asyncio.AbstractEventLoop
    # Per-run hooks given as Python callables (not storable in Run.options).
    hooks: dict[str, Any] = field(default_factory=dict)
    task: asyncio.Task | None = None


_active: dict[str, ActiveRun] = {}
# Per-run Python hooks waiting for their run to start (run_start(options={"hooks": ...})).
_pending_hooks: dict[str, dict[str, Any]] = {}
_tasks: set[asyncio.Task] = set()
_background: asyncio.AbstractEventLoop | None = None
_background_lock = threading.Lock()
Executor = Callable[..., Coroutine[Any, Any, Any]]
_executor: list[Executor] = []


def set_executor(execute: Executor) -> None:
    """The coroutine function that executes a run: `execute(run_id, abort=None)`."""
    _executor[:] = [execute]


def execute(run_id: Any, *, abort: asyncio.Event | None = None) -> Coroutine[Any, Any, Any]:
    """Execute a run in the calling task (a sub-agent's run, inside its parent's)."""
    return _executor[0](run_id, abort=abort)


def get(run_id: Any) -> ActiveRun | None:
    return _active.get(str(run_id))


def register(active: ActiveRun) -> None:
    _active[active.run_id] = active


def unregister(run_id: Any) -> None:
    _active.pop(str(run_id), None)


ABORT_POLL_SECONDS = 1.0
_abort_poll = [ABORT_POLL_SECONDS]
_watchers: dict[asyncio.AbstractEventLoop, asyncio.Task] = {}


def poll_aborts_every(seconds: float) -> None:
    """How often the watcher looks for aborted runs: a run worker, told of each abort by
    a notification (runtime/execution/worker.py), polls only in case one was missed."""
    _abort_poll[0] = seconds


def watch_aborts(loop: asyncio.AbstractEventLoop) -> None:
    """An abort requested through another process is written on the run (its state's
    `abortRequested`); one task per event loop polls for the runs executing on it, with one
    query for all of them."""
    task = _watchers.get(loop)
    if task is None or task.done():
        _watchers[loop] = loop.create_task(_watch(loop))


def _tick(run_ids: list[str], *, sweep: bool = False) -> list[Any]:
    """One query round for the watcher: this process's heartbeat (when it executes runs
    inline: run workers beat on their own), then the runs asked to stop."""
    if not uses_workers():
        process_beat(name=process_name(), sweep=sweep)
    return store.runs_abort_requested(run_ids) if run_ids else []


async def _watch(loop: asyncio.AbstractEventLoop) -> None:
    try:
        await db(_tick, [], sweep=True)  # beat at once: the run has just started here
    except Exception:  # noqa: BLE001 - the next round retries
        logger.exception("The run heartbeat failed")
    while True:
        await asyncio.sleep(_abort_poll[0])
        runs = {
            active.run_id: active
            for active in list(_active.values())
            if active.loop is loop and not active.abort.is_set()
        }
        if not runs:
            _watchers.pop(loop, None)
            return
        try:
            aborted = await db(_tick, list(runs))
        except Exception:  # noqa: BLE001 - the database is down: the next poll retries
            logger.exception("Polling for aborted runs failed")
            continue
        for run_id in aborted:
            runs[str(run_id)].abort.set()


def remember_hooks(run_id: Any, hooks: dict[str, Any]) -> None:
    if hooks:
        _pending_hooks[str(run_id)] = hooks


def take_hooks(run_id: Any) -> dict[str, Any]:
    return _pending_hooks.pop(str(run_id), {})


def request_abort(run_id: Any, *, elsewhere: bool = False) -> bool:
    """Set the abort event of a run executing in this process (thread-safe). `elsewhere`:
    when it is not here and runs execute in run workers, notify them (the abort flag must
    be committed, or be in the transaction that commits it)."""
    active = get(run_id)
    if active is None:
        if elsewhere and uses_workers():
            notify(RUN_ABORT, str(run_id))
        return False
    active.loop.call_soon_threadsafe(active.abort.set)
    return True


def _main_loop() -> asyncio.AbstractEventLoop | None:
    try:
        return asyncio.get_running_loop()
    except RuntimeError:
        pass
    loop = getattr(SyncToAsync.threadlocal, "main_event_loop", None)
    pid = getattr(SyncToAsync.threadlocal, "main_event_loop_pid", None)
    if loop is not None and pid == os.getpid() and loop.is_running():
        return loop
    return None


def _background_loop() -> asyncio.AbstractEventLoop:
    global _background
    with _background_lock:
        if _background is None or not _background.is_running():
            loop = asyncio.new_event_loop()
            ready = threading.Event()

            def run() -> None:
                asyncio.set_event_loop(loop)
                loop.call_soon(ready.set)
                loop.run_forever()

            threading.Thread(target=run, name="runtime-loop", daemon=True).start()
            ready.wait()
            _background = loop
        return _background


_launching = [0]


def _spawn(run_id: str) -> None:
    task = asyncio.ensure_future(execute(run_id))
    _tasks.add(task)
    _launching[0] -= 1
    task.add_done_callback(_tasks.discard)


def launch(run_id: Any) -> None:
    """Start executing a run (call after the rows it needs are committed)."""
    launch_many([run_id])


def launch_many(run_ids: list[Any]) -> None:
    """Start executing runs (committed): the run workers are woken once for all."""
    if uses_workers():
        wake_workers()  # the runs are queued in the database; the workers claim them
        return
    for run_id in run_ids:
        _launch_here(str(run_id))


def _launch_here(run_id: str) -> None:
    loop = _main_loop()
    if loop is None:
        loop = _background_loop()
    try:
        running = asyncio.get_running_loop()
    except RuntimeError:
        running = None
    _launching[0] += 1
    if running is loop:
        _spawn(run_id)
    else:
        loop.call_soon_threadsafe(_spawn, run_id)


# Messages being taken on each event loop (a chat's `run_start` under way for a socket of
# this process): a run launched meanwhile waits for them before its set-up, at most
# TAKE_WAIT_SECONDS, so that a burst of messages gets its `run-start` answers before the
# runs' work competes with them for the process (docs/runs.md, "What a run costs").
TAKE_WAIT_SECONDS = 1.0
_taking: dict[asyncio.AbstractEventLoop, int] = {}
_taken: dict[asyncio.AbstractEventLoop, asyncio.Event] = {}


@contextlib.asynccontextmanager
async def taking_message() -> AsyncIterator[None]:
    """Around the taking of one message (the websocket consumer's chat)."""
    loop = asyncio.get_running_loop()
    _taking[loop] = _taking.get(loop, 0) + 1
    if loop not in _taken:
        _taken[loop] = asyncio.Event()
    try:
        yield
    finally:
        _taking[loop] -= 1
        if not _taking[loop]:
            del _taking[loop]
            _taken.pop(loop).set()


async def messages_taken(timeout: float = TAKE_WAIT_SECONDS) -> None:
    """Return once no message is being taken on this loop (or after `timeout`)."""
    event = _taken.get(asyncio.get_running_loop())
    if event is not None:
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(event.wait(), timeout)


async def wait_idle(timeout: float = 30.0) -> None:
    """Wait until every run task of this process has finished, whichever loop runs it
    (tests, shutdown)."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while _launching[0] > 0 or any(not task.done() for task in list(_tasks)):
        if loop.time() > deadline:
            raise TimeoutError("runs still executing")
        mine = [task for task in list(_tasks) if task.get_loop() is loop and not task.done()]
        if mine:
            await asyncio.wait(mine, timeout=max(0.0, deadline - loop.time()))
        else:
            await asyncio.sleep(0.02)
