"""Live delivery of a thread's events: who numbers them, who is told at once.

While a run streams, the process executing it is the only writer of its thread's events
(one running run per thread): its `Owner` numbers them itself, from the thread's
`last_seq` read under the thread's row lock when the run starts, and is registered here
as the thread's owner. Each event goes at once to the thread's subscribers in this
process (websocket consumers registered with `subscribe`) and, over Redis, to those of
other processes (runtime/relay.py: one publish per event-loop pass); the stream writer
stores it behind (runtime/events.py). The owner's `tail` holds what it delivered
and has not stored yet, for a consumer of this process that replays.

Other writers (signals, titles, async tool results: sync code in Celery tasks or views)
go through `events.events_emit_sync`: under the thread's row lock it looks for a running
run claimed by a process; when there is one, the events are handed to that process
(runtime/handoff.py) and its sink numbers them among its own. Otherwise the database numbers them,
as it always did.
"""

from __future__ import annotations

import asyncio
import threading
from collections import defaultdict
from typing import Any, Protocol

_owners: dict[str, Owner] = {}
_subscribers: dict[str, set[Subscriber]] = defaultdict(set)
_names: set[str] = set()  # the names runs of this process carry (Run.worker)
_lock = threading.Lock()


class Owner(Protocol):
    """A run's sink (runtime/events.py) while it numbers its thread's events."""

    thread_id: str
    loop: asyncio.AbstractEventLoop
    seq: int | None
    tail: list[tuple[int, str]]
    released: bool

    def external(self, run_id: Any, events: list[dict[str, Any]]) -> None: ...


class Subscriber(Protocol):
    """A websocket consumer of this process, told of each event of its thread at once."""

    loop: asyncio.AbstractEventLoop

    def live_events(self, items: list[tuple[int, str]]) -> None: ...

    def live_stored(self, seq: int) -> None: ...


def subscribe(thread_id: Any, subscriber: Subscriber) -> None:
    with _lock:
        _subscribers[str(thread_id)].add(subscriber)


def subscribers(thread_id: Any) -> list[Subscriber]:
    return list(_subscribers.get(str(thread_id), ()))


def unsubscribe(thread_id: Any, subscriber: Subscriber) -> None:
    with _lock:
        subscribers = _subscribers.get(str(thread_id))
        if subscribers is not None:
            subscribers.discard(subscriber)
            if not subscribers:
                del _subscribers[str(thread_id)]


def deliver(thread_id: str, items: list[tuple[int, str]]) -> None:
    """Hand `(seq, JSON text)` events to this process's subscribers of the thread, each
    on its own event loop."""
    subscribers = _subscribers.get(thread_id)
    if not subscribers:
        return
    try:
        running = asyncio.get_running_loop()
    except RuntimeError:
        running = None
    for subscriber in list(subscribers):
        if subscriber.loop is running:
            subscriber.live_events(items)
        elif not subscriber.loop.is_closed():
            subscriber.loop.call_soon_threadsafe(subscriber.live_events, items)


def own(sink: Owner, name: str | None) -> None:
    """Register a sink as its thread's owner (before it reads `last_seq`: see
    events.events_emit_sync); runs claimed under `name` execute in this process."""
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
    from agents_core.runtime.processes import process_name

    return name == process_name() or name in _names


def tail_after(thread_id: Any, after: int) -> list[tuple[int, str]]:
    """What this process's owner of the thread delivered after `after` and has not stored
    yet (empty when the owner is elsewhere or there is none)."""
    sink = _owners.get(str(thread_id))
    if sink is None:
        return []
    return [(seq, text) for seq, text in list(sink.tail) if seq > after]
