"""Deadlines for calls made on the caller's own thread, without a thread per call.

    value = call_with_deadline(fn, (input, context), seconds)   # or raises DeadlinePassed

One watchdog thread per process keeps the deadlines of the calls in progress and sleeps
until the earliest. A call that ends in time only takes its deadline back (no wake-up of
the watchdog, no thread started). A call still running at its deadline gets `Overrun`
raised inside it, in its own thread (CPython's PyThreadState_SetAsyncExc), and its caller
gets `DeadlinePassed`.

What that can and cannot stop: Python code is stopped at its next bytecode; a call blocked
in C (a sleep, a socket read, a long regex) is stopped when that call returns to Python,
so the caller waits that long. `Overrun` derives from BaseException so that a tool's
`except Exception` does not swallow it; a tool that swallows it anyway still ends as a
timeout once it returns. The pipeline runs a tool this way only while the tool is
observed fast (tools_app/types/code/pace.py); one that blocks goes to a thread of its own.
"""

from __future__ import annotations

import ctypes
import math
import os
import threading
import time
from collections.abc import Callable
from typing import Any

# Two prototypes of the same C function: one that sets an exception, one that clears it
# (a NULL exception), kept apart from ctypes.pythonapi's shared attribute.
_set_async_exc = ctypes.PYFUNCTYPE(ctypes.c_int, ctypes.c_ulong, ctypes.py_object)(
    ("PyThreadState_SetAsyncExc", ctypes.pythonapi)
)
_clear_async_exc = ctypes.PYFUNCTYPE(ctypes.c_int, ctypes.c_ulong, ctypes.c_void_p)(
    ("PyThreadState_SetAsyncExc", ctypes.pythonapi)
)


class Overrun(BaseException):  # noqa: N818 - raised inside the overrunning call
    """Raised inside a call that passed its deadline."""


class DeadlinePassed(Exception):  # noqa: N818
    """The call passed its deadline and was stopped."""


class _Ticket:
    __slots__ = ("deadline", "fired", "sent", "thread_id")

    def __init__(self, thread_id: int, deadline: float) -> None:
        self.thread_id = thread_id
        self.deadline = deadline
        self.fired = False  # the watchdog took the ticket: Overrun is (about to be) raised
        self.sent = False  # Overrun was handed to the thread


class _Watchdog:
    def __init__(self) -> None:
        self._cond = threading.Condition(threading.Lock())
        # Tickets of the calls in progress, by id(ticket). Whoever pops a ticket first
        # decides: the call (it ended in time) or the watchdog (it fires). dict.pop is
        # atomic, so the two never both win.
        self._armed: dict[int, _Ticket] = {}
        self._wake_at = math.inf
        self._thread: threading.Thread | None = None

    def arm(self, seconds: float) -> _Ticket:
        ticket = _Ticket(threading.get_ident(), time.monotonic() + seconds)
        with self._cond:
            self._armed[id(ticket)] = ticket
            if self._thread is None:
                self._thread = threading.Thread(
                    target=self._watch, name="tool-deadlines", daemon=True
                )
                self._thread.start()
            elif ticket.deadline < self._wake_at:
                self._cond.notify()
        return ticket

    def settle(self, ticket: _Ticket) -> None:
        """Take the ticket back after the call. When the watchdog took it first, wait
        until Overrun was handed over, then drop it if it is still pending (Overrun may
        also be raised here, which the caller treats as the timeout it is)."""
        if self._armed.pop(id(ticket), None) is not None:
            return
        while not ticket.sent:
            time.sleep(0.0001)
        _clear_async_exc(ticket.thread_id, None)

    def _watch(self) -> None:
        while True:
            with self._cond:
                now = time.monotonic()
                tickets = list(self._armed.values())
                due = [t for t in tickets if t.deadline <= now]
                later = [t.deadline for t in tickets if t.deadline > now]
                self._wake_at = min(later, default=math.inf)
                if not due:
                    wait = None if self._wake_at == math.inf else self._wake_at - now
                    self._cond.wait(wait)
                    continue
            for ticket in due:
                self._fire(ticket)

    def _fire(self, ticket: _Ticket) -> None:
        if self._armed.pop(id(ticket), None) is None:
            return  # the call ended first
        ticket.fired = True
        _set_async_exc(ticket.thread_id, Overrun)
        ticket.sent = True


_watchdog = _Watchdog()


def _after_fork_in_child() -> None:
    """A forked child (a Celery prefork worker) has none of its parent's threads: it gets
    a watchdog of its own, started on its first deadline."""
    global _watchdog
    _watchdog = _Watchdog()


os.register_at_fork(after_in_child=_after_fork_in_child)


def call_with_deadline(fn: Callable[..., Any], args: tuple[Any, ...], seconds: float) -> Any:
    """`fn(*args)` on this thread; DeadlinePassed when it runs past `seconds`."""
    ticket = _watchdog.arm(seconds)
    try:
        try:
            value = fn(*args)
        finally:
            _watchdog.settle(ticket)
    except Overrun:
        if not ticket.fired:
            raise  # the deadline of an enclosing call on this thread
        raise DeadlinePassed(f"Stopped after {seconds:g} s.") from None
    if ticket.fired:  # it swallowed Overrun, or returned just as it was sent
        raise DeadlinePassed(f"Stopped after {seconds:g} s.")
    return value
