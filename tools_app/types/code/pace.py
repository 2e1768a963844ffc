"""Where a code tool's sync `execute` runs: on its caller's thread, or in a thread of its own.

A thread of its own costs a thread start and two hand-overs per call (hundreds of
microseconds) but keeps a blocking tool from holding its caller: the event loop of the
agent runs, or a request's thread past the tool's timeout. So a definition starts in
threads, and runs inline once it has shown it does not need one:

- `PROBATION` runs in a row in a thread of its own, each within STUDIO_TOOL_INLINE_MS and
  without opening a database connection, make it inline;
- an inline run longer than STUDIO_TOOL_INLINE_MS sends it back to threads (probation
  again), and so does a timeout;
- using the database in a thread run, returning an awaitable, or being refused the
  caller's thread (Django's SynchronousOnlyOperation: the ORM on an event loop's thread)
  keeps it in threads for good. A run refused that way runs again in a thread: Django
  refuses before any query, but what the tool did before its first query is done twice.

An inline run's timeout is kept by the watchdog of tools_app/deadlines.py (which says
what it can stop). The state is per process and per definition, in memory.
"""

from __future__ import annotations

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
    if time.perf_counter() - started > budget_seconds():
        pace.fast_runs = 0
    if inspect.isawaitable(value):
        pace.needs_thread = True
    return value


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
