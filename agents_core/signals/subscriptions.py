"""subscribe_to_thread: a thread's live events, its active run, abort, unsubscribe.

In the browser the subscription is the thread's websocket (/ws/threads/<id>/, the run
loop's consumer); in Python it is this object, reading the same channel-layer group.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Any

from channels.db import database_sync_to_async
from channels.layers import get_channel_layer

from agents_core.models import Run, Thread
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
        self.layer = get_channel_layer()
        self.group = bridge.thread_group(thread.id)
        self.channel: str | None = None
        self.buffered: list[dict[str, Any]] = []

    async def start(self) -> ThreadSubscription:
        self.channel = await self.layer.new_channel()
        await self.layer.group_add(self.group, self.channel)
        return self

    async def active_run_id(self) -> str | None:
        run: Run | None = await database_sync_to_async(thread_active_run)(thread=self.thread)
        return str(run.id) if run else None

    async def abort(self) -> Any:
        return await database_sync_to_async(thread_abort)(thread=self.thread, user=self.user)

    async def next_event(self, timeout: float | None = None) -> dict[str, Any]:
        """The next live event (the channel layer may carry several in one message)."""
        while not self.buffered:
            message = await asyncio.wait_for(self.layer.receive(self.channel), timeout)
            self.buffered.extend(bridge.events_from_group_message(message))
        return self.buffered.pop(0)

    def __aiter__(self) -> AsyncIterator[dict[str, Any]]:
        return self._events()

    async def _events(self) -> AsyncIterator[dict[str, Any]]:
        while self.channel is not None:
            yield await self.next_event()

    async def unsubscribe(self) -> None:
        if self.channel is not None:
            await self.layer.group_discard(self.group, self.channel)
            self.channel = None


async def subscribe_to_thread(*, thread: Thread, user) -> ThreadSubscription:  # noqa: ANN001
    """Join the thread's event group (the caller has checked that `user` owns it)."""
    return await ThreadSubscription(thread, user).start()
