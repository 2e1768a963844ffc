"""The event bus: a thread's numbered events from whoever numbers them to every subscriber,
in this process and in the others, with replay and gaps handled in one place.

Publishing. A run's sink numbers its thread's events while it streams (runtime/bus/events.py)
and publishes each through its loop's `Publisher`: this process's subscribers are told at
once (bus/local.py), the other processes that follow the thread get them over Redis at the
end of the loop's pass (bus/redis.py). Sync code publishes events the database numbered
and stored with `publish_stored`, after its transaction commits.

Subscribing. `subscribe(thread_id, after=..., stored=..., send=...)` returns a started
`Subscription` (bus/subscription.py): it replays the stored events after `after`, then
sends live ones, each seq once and in order, and holds an event that skips ahead until
the missing ones are found. The thread's websocket (agents_core/consumers.py) and
`subscribe_to_thread` (agents_core/signals/subscriptions.py) are its subscribers.

Without a Redis channel layer (in-memory, `make run`: one process) nothing crosses
processes and the subscribers of this process are all there is.
"""

from __future__ import annotations

from typing import Any

from agents_core.runtime.bus.redis import Publisher, publish_sync
from agents_core.runtime.bus.subscription import Send, Subscription

__all__ = ["Publisher", "Subscription", "publish_stored", "subscribe"]


def publish_stored(batches: list[tuple[Any, list[tuple[int, str]]]], reset: bool = False) -> None:
    """Publish `[(thread, [(seq, JSON text), ...]), ...]`, events stored already, from sync
    code. `reset`: numbered after what a run's dead process stored (a subscriber that was
    sent more starts over)."""
    publish_sync(batches, reset)


async def subscribe(thread_id: Any, *, after: int, stored: int, send: Send) -> Subscription:
    """Subscribe to a thread's events after `after` (`stored`: its last stored seq);
    `send` gets each event's JSON text, in order. `close()` the subscription when done."""
    subscription = Subscription(thread_id, after, send)
    try:
        await subscription.start(stored)
    except BaseException:
        subscription.close()
        raise
    return subscription
