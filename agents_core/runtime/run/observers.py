"""The run's observer seam: what happens in a run, at its boundaries, for whoever listens.

The loop calls `notify(event, run_id, **fields)` at a handful of boundaries (a run starts
or ends, a model call starts or ends, a tool call starts or ends, a hook decides, a call
suspends or resumes, signals are drained, a sub-agent run starts) and awaits `flush(run_id)`
at step boundaries and at the run's end. Nothing is called per streamed delta.

An observer is an object with methods named like the events (any it lacks are skipped)
and an optional `async flush(run_id, *, wait)`. The studio's tracing registers one (`traces`);
agents_core never imports its observers. With none registered, `notify` is one test of
an empty list.

Observers must not break a run: their exceptions are logged and swallowed.
"""

from __future__ import annotations

import logging
from typing import Any

logger = logging.getLogger(__name__)

_observers: list[Any] = []


def register(observer: Any) -> None:
    if observer not in _observers:
        _observers.append(observer)


def unregister(observer: Any) -> None:
    if observer in _observers:
        _observers.remove(observer)


def active() -> bool:
    return bool(_observers)


def notify(event: str, run_id: str, **fields: Any) -> None:
    """Tell every observer that has a method `event` (run_id first, then the fields)."""
    for observer in _observers:
        method = getattr(observer, event, None)
        if method is None:
            continue
        try:
            method(run_id, **fields)
        except Exception:  # noqa: BLE001 - observing a run never fails it
            logger.exception("Run observer %r failed on %s", observer, event)


async def flush(run_id: str, *, wait: bool = True) -> None:
    """Let observers write what they buffered for the run (step boundaries, run end).
    Without `wait` they may write it behind the run (a step boundary): `flush(wait=True)`
    returns once everything handed over before it is written."""
    for observer in _observers:
        method = getattr(observer, "flush", None)
        if method is None:
            continue
        try:
            await method(run_id, wait=wait)
        except Exception:  # noqa: BLE001
            logger.exception("Run observer %r failed to flush run %s", observer, run_id)
