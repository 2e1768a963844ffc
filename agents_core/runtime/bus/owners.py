"""The threads whose events this process numbers: each one's owner, a run's sink
(runtime/bus/events.py) while its run streams (runtime/bus/handoff.py says why it may).

The bus reads it twice: a thread with an owner here is told directly, so its events
coming back from Redis are dropped (bus/redis.py); and the owner's `tail`, what it
published and has not stored yet, is replayed to a subscription of this process after
the stored events (bus/subscription.py).
"""

from __future__ import annotations

import asyncio
import threading
from typing import Any, Protocol

_owners: dict[str, Owner] = {}
_names: set[str] = set()  # the names runs of this process carry (Run.worker)
_lock = threading.Lock()


class Owner(Protocol):
    """A run's sink (runtime/bus/events.py) while it numbers its thread's events."""

    thread_id: str
    loop: asyncio.AbstractEventLoop
    seq: int | None
    tail: list[tuple[int, str]]
    released: bool

    def external(self, run_id: Any, events: list[dict[str, Any]]) -> None: ...


def own(sink: Owner, name: str | None) -> None:
    """Register a sink as its thread's owner (before it reads `last_seq`: see
    handoff.events_emit_sync); runs claimed under `name` execute in this process."""
    with _lock:
        _owners[sink.thread_id] = sink
        if name:
            _names.add(name)


def disown(sink: Owner) -> None:
    with _lock:
        if _owners.get(sink.thread_id) is sink:
            del _owners[sink.thread_id]


def owner(thread_id: Any) -> Owner | None:
    return _owners.get(str(thread_id))


def is_local(name: str) -> bool:
    """Whether runs claimed under `name` execute in this process."""
    from agents_core.runtime.execution.processes import process_name

    return name == process_name() or name in _names


def tail_after(thread_id: Any, after: int) -> list[tuple[int, str]]:
    """What this process's owner of the thread published after `after` and has not stored
    yet (empty when the owner is elsewhere or there is none)."""
    sink = _owners.get(str(thread_id))
    if sink is None:
        return []
    return [(seq, text) for seq, text in list(sink.tail) if seq > after]
