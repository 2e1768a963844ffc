"""The bus's subscribers in this process: told of each event of their thread at once.

A subscriber is a `Subscription` (bus/subscription.py) living on some event loop (a
websocket's, a Python `subscribe_to_thread`'s); `deliver` hands it events on that loop,
directly when it is the running one, else with `call_soon_threadsafe` (a run executing on
another loop of this process, or sync code in a thread after its transaction commits).
"""

from __future__ import annotations

import asyncio
import threading
from collections import defaultdict
from typing import Any, Protocol

_subscribers: dict[str, set[Subscriber]] = defaultdict(set)
_lock = threading.Lock()


class Subscriber(Protocol):
    loop: asyncio.AbstractEventLoop

    def live_events(self, items: list[tuple[int, str]], reset: bool = False) -> None: ...

    def live_stored(self, seq: int) -> None: ...


def subscribe(thread_id: Any, subscriber: Subscriber) -> None:
    with _lock:
        _subscribers[str(thread_id)].add(subscriber)


def subscribers(thread_id: Any) -> list[Subscriber]:
    return list(_subscribers.get(str(thread_id), ()))


def unsubscribe(thread_id: Any, subscriber: Subscriber) -> None:
    with _lock:
        found = _subscribers.get(str(thread_id))
        if found is not None:
            found.discard(subscriber)
            if not found:
                del _subscribers[str(thread_id)]


def deliver(thread_id: str, items: list[tuple[int, str]], reset: bool = False) -> None:
    """Hand `(seq, JSON text)` events to this process's subscribers of the thread, each on
    its own loop. `reset`: numbered after what a dead owner stored (see subscription.py)."""
    found = _subscribers.get(thread_id)
    if not found:
        return
    try:
        running = asyncio.get_running_loop()
    except RuntimeError:
        running = None
    for subscriber in list(found):
        if subscriber.loop is running:
            subscriber.live_events(items, reset)
        elif not subscriber.loop.is_closed():
            subscriber.loop.call_soon_threadsafe(subscriber.live_events, items, reset)
