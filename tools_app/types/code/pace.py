"""Where a code tool's sync `execute` runs: on its caller's thread, or in a thread of its own.

A thread of its own costs a thread start and two hand-overs per call (hundreds of
microseconds) but keeps a blocking tool from holding its caller: the event loop of the
agent runs, or a request's thread past the tool's timeout. So a definition starts in
threads, and runs inline once it has shown it does not need one (a definition made with
`create_tool(..., inline=False)`, one that may block on I/O, never does):

- `PROBATION` runs in a row in a thread of its own, each within STUDIO_TOOL_INLINE_MS and
  without opening a database connection, make it inline;
- an inline run longer than STUDIO_TOOL_INLINE_MS sends it back to threads (probation
  again), and so does a timeout: a tool fast three times and then slow holds its caller
  for that one run (the whole event loop, when the caller is the agent loop's);
- using the database in a thread run, returning an awaitable, or being refused the
  caller's thread (Django's SynchronousOnlyOperation: the ORM on an event loop's thread;
  asyncio's or asgiref's refusal to start a loop or async_to_sync there) keeps it in
  threads for good. A run refused that way runs again in a thread: the refusal comes
  before the refused call does anything, but what the tool did before it is done twice.

An inline run's timeout is kept by the watchdog of tools_app/deadlines.py (which says
what it can stop). The state is per process and per definition, in memory.
"""

from __future__ import annotations

import asyncio
import inspect
import time
from collections.abc import Callable
from typing import Any

from django.conf import settings
from django.core.exceptions import SynchronousOnlyOperation
from django.db import connections

from tools_app.deadlines import DeadlinePassed, call_with_deadline
from tools_app.types import INLINE_DECLINED as DECLINED

PROBATION = 3


class Pace:
    __slots__ = ("fast_runs", "fn", "needs_thread")

    def __init__(self, fn: Callable[..., Any]) -> None:
        self.fn = fn
        self.fast_runs = 0
        self.needs_thread = False

    @property
    def inline(self) -> bool:
        return not self.needs_thread and self.fast_runs >= PROBATION

    def observed(self, seconds: float, *, used_database: bool, awaitable: bool) -> None:
        """A run in a thread of its own ended (whatever its outcome)."""
        if used_database or awaitable:
            self.needs_thread = True
        elif seconds <= budget_seconds():
            self.fast_runs += 1
        else:
            self.fast_runs = 0


def budget_seconds() -> float:
    return float(settings.STUDIO_TOOL_INLINE_MS) / 1000


def pace_of(definition: Any) -> Pace:
    """The pace of a definition's current `execute` (a new one when it was replaced)."""
    pace = definition.__dict__.get("_inline_pace")
    if pace is None or pace.fn is not definition.execute:
        pace = definition.__dict__["_inline_pace"] = Pace(definition.execute)
    return pace


def run_inline(pace: Pace, args: tuple[Any, ...], timeout: float) -> Any:
    """The run on this thread, with its timeout: its output, or DECLINED when the caller's
    thread refused it (see the module docstring). Raises DeadlinePassed."""
    started = time.perf_counter()
    try:
        value = call_with_deadline(pace.fn, args, timeout)
    except DeadlinePassed:
        pace.fast_runs = 0
        _drop_interrupted_connections()
        raise
    except SynchronousOnlyOperation:
        pace.needs_thread = True
        return DECLINED
    except RuntimeError as exc:
        if not _refused_by_running_loop(exc):
            raise
        pace.needs_thread = True
        return DECLINED
    if time.perf_counter() - started > budget_seconds():
        pace.fast_runs = 0
    if inspect.isawaitable(value):
        pace.needs_thread = True
    return value


def _refused_by_running_loop(exc: RuntimeError) -> bool:
    """asyncio's and asgiref's refusals to start a loop, or async_to_sync, on a thread
    that runs an event loop (raised before anything runs)."""
    text = str(exc)
    return asyncio._get_running_loop() is not None and (
        "event loop" in text or "loop is already running" in text
    )


def used_database() -> bool:
    """Whether this thread opened a database connection (for a thread of a tool run)."""
    return any(conn.connection is not None for conn in connections.all(initialized_only=True))


def _drop_interrupted_connections() -> None:
    """A run stopped mid-query could leave a connection mid-protocol: this thread's
    connections outside a transaction are closed (opened again on their next use). One in
    the caller's transaction is left to it (an inline tool used no database so far)."""
    for conn in connections.all(initialized_only=True):
        if not conn.in_atomic_block:
            conn.close()
