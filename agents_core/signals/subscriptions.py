"""subscribe_to_thread: a thread's live events, its active run, abort, unsubscribe.

In the browser the subscription is the thread's websocket (/ws/threads/<id>/, the run
loop's consumer); in Python it is this object: the same subscription to the event bus
(runtime/bus), from the thread's last stored event on, each event once and in order.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from typing import Any

from channels.db import database_sync_to_async

from agents_core.models import Run, Thread
from agents_core.runtime import bus
from agents_core.services.runs import thread_active_run
from agents_core.signals import bridge


def thread_subscription_info(*, thread: Thread) -> dict[str, Any]:
    run = thread_active_run(thread=thread)
    return {
        "threadId": str(thread.id),
        "activeRunId": str(run.id) if run else None,
        "lastSeq": Thread.objects.values_list("last_seq", flat=True).get(id=thread.id),
        "websocket": f"/ws/threads/{thread.id}/",
        "events": f"/api/threads/{thread.id}/events/",
    }


def thread_abort(*, thread: Thread, user) -> Any:  # noqa: ANN001
    """Abort the thread's active run; returns its id (None when the thread was idle)."""
    run = thread_active_run(thread=thread)
    if run is None:
        return None
    bridge.run_abort(run=run, user=user)
    return run.id


class ThreadSubscription:
    """Live events of one thread: `async for event in subscription`, then `unsubscribe()`."""

    def __init__(self, thread: Thread, user) -> None:  # noqa: ANN001
        self.thread = thread
        self.user = user
        self.subscription: bus.Subscription | None = None
        self.events: asyncio.Queue[dict[str, Any]] = asyncio.Queue()

    async def start(self) -> ThreadSubscription:
        stored = await database_sync_to_async(
            Thread.objects.values_list("last_seq", flat=True).get
        )(id=self.thread.id)
        self.subscription = await bus.subscribe(
            self.thread.id, after=stored, stored=stored, send=self._received
        )
        return self

    async def _received(self, text: str) -> None:
        self.events.put_nowait(json.loads(text))

    async def active_run_id(self) -> str | None:
        run: Run | None = await database_sync_to_async(thread_active_run)(thread=self.thread)
        return str(run.id) if run else None

    async def abort(self) -> Any:
        return await database_sync_to_async(thread_abort)(thread=self.thread, user=self.user)

    async def next_event(self, timeout: float | None = None) -> dict[str, Any]:
        """The next live event (TimeoutError after `timeout` seconds without one)."""
        return await asyncio.wait_for(self.events.get(), timeout)

    def __aiter__(self) -> AsyncIterator[dict[str, Any]]:
        return self._events()

    async def _events(self) -> AsyncIterator[dict[str, Any]]:
        while self.subscription is not None:
            yield await self.next_event()

    async def unsubscribe(self) -> None:
        if self.subscription is not None:
            self.subscription.close()
            self.subscription = None


async def subscribe_to_thread(*, thread: Thread, user) -> ThreadSubscription:  # noqa: ANN001
    """Subscribe to the thread's events (the caller has checked that `user` owns it)."""
    return await ThreadSubscription(thread, user).start()
