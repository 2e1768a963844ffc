"""A subscriber's view of one thread's events: the stored ones after `after`, then live
ones, each seq sent once and in order, gaps waited for and a lost tail reset.

`start` subscribes first (to this process's deliveries, bus/local.py, and to the other
processes' through Redis, bus/redis.py) and then replays: the stored events after `after`,
then those this process's run delivered and has not stored yet (its owner's tail,
bus/owners.py). From then on a live event with the next seq is sent at once; one that
skips ahead waits until the missing ones are found: stored (replayed from the database),
in this process's owner's tail, or, when their owner is another process, once that process
says it stored them (`live_stored`). A client that was sent events nobody stored (their
run's process died first) is told to start over: `{"type": "reset", "lastSeq": n}`.
"""

from __future__ import annotations

import asyncio
import json
from collections import deque
from collections.abc import Awaitable, Callable
from typing import Any

from channels.db import database_sync_to_async

from agents_core.runtime.bus.local import subscribe, subscribers, unsubscribe
from agents_core.runtime.bus.owners import owner, tail_after
from agents_core.runtime.bus.redis import follow, unfollow

Send = Callable[[str], Awaitable[None]]


def _in_thread(fn: Any) -> Any:
    """Database work in any of asgiref's threads (many subscriptions replay in parallel)."""
    return database_sync_to_async(fn, thread_sensitive=False)


class Subscription:
    def __init__(self, thread_id: Any, after: int, send: Send) -> None:
        self.thread_id = str(thread_id)
        self.last_seq = max(0, after)  # the last seq sent
        self.send = send
        self.loop = asyncio.get_running_loop()
        self.sending = asyncio.Lock()  # one path sends at a time, in seq order
        self.held: dict[int, str] = {}  # live events after a gap not found yet
        self.recent: deque[tuple[int, str]] = deque(maxlen=256)  # the last events sent
        self.incoming: deque[tuple[list[tuple[int, str]], bool]] = deque()
        self.draining = False

    async def start(self, stored: int) -> None:
        """Subscribe, then replay; `stored` is the thread's last stored seq."""
        subscribe(self.thread_id, self)
        await follow(self.thread_id)
        async with self.sending:
            sink = owner(self.thread_id)
            if self.last_seq > stored and (sink is None or sink.seq is not None):
                lost = await _in_thread(_stored_if_lost)(
                    self.thread_id, self.last_seq, sink.seq if sink else None
                )
                if lost is not None:
                    await self._reset(lost)
            await self._catch_up()

    def close(self) -> None:
        unsubscribe(self.thread_id, self)
        if not any(s.loop is self.loop for s in subscribers(self.thread_id)):
            unfollow(self.thread_id)

    # --- told by the bus (on this subscription's loop) ---------------------------------------
    def live_events(self, items: list[tuple[int, str]], reset: bool = False) -> None:
        self.incoming.append((items, reset))
        if not self.draining:
            self.draining = True
            self.loop.create_task(self._drain())

    def live_stored(self, seq: int) -> None:
        """The run's process (another one) stored the thread's events up to `seq`: what
        is held behind a gap, or was delivered before this subscribed, is replayed now."""
        if seq > self.last_seq:
            self.loop.create_task(self._stored(seq))

    async def _stored(self, seq: int) -> None:
        if seq > self.last_seq:
            async with self.sending:
                await self._catch_up()

    async def _drain(self) -> None:
        try:
            async with self.sending:
                while self.incoming:
                    items, reset = self.incoming.popleft()
                    if reset and items and self._sent_other(*items[0]):
                        # Numbered after what the dead owner stored: what it sent beyond
                        # is gone.
                        await self._reset(items[0][0] - 1)
                    for seq, text in items:
                        await self._forward(seq, text)
        finally:
            self.draining = False

    # --- sending in order ---------------------------------------------------------------------
    async def _forward(self, seq: int, text: str) -> None:
        """A live event: sent now, or held until the events before it are found."""
        if seq > self.last_seq + 1:
            await self._catch_up(before=seq)
            if seq > self.last_seq + 1:
                self.held[seq] = text  # unstored at another process: see live_stored
                return
        await self._send(seq, text)
        if self.held:
            await self._send_held()

    async def _catch_up(self, before: int | None = None) -> None:
        """Send what is missing after the last seq sent: stored, then this process's
        owner's unstored tail; then the held events that now follow."""
        from agents_core.services import threads

        after = self.last_seq
        while True:
            if before is None:
                events = await _in_thread(threads.thread_events_after)(
                    thread_id=self.thread_id, after=after
                )
            else:
                events = await _in_thread(threads.thread_events_between)(
                    thread_id=self.thread_id, after=after, before=before
                )
            for event in events:
                await self._send(event["seq"], json.dumps(event))
            if before is not None or len(events) < threads.EVENTS_PAGE:
                break
            after = self.last_seq
        for seq, text in tail_after(self.thread_id, self.last_seq):
            if before is None or seq < before:
                await self._send(seq, text)
        await self._send_held()

    async def _send_held(self) -> None:
        while self.last_seq + 1 in self.held:
            seq = self.last_seq + 1
            await self._send(seq, self.held.pop(seq))
        for seq in [seq for seq in self.held if seq <= self.last_seq]:
            del self.held[seq]

    async def _send(self, seq: int, text: str) -> None:
        """Send an event (its JSON text) unless it was sent already."""
        if seq <= self.last_seq:
            return
        self.last_seq = seq
        self.recent.append((seq, text))
        await self.send(text)

    def _sent_other(self, seq: int, text: str) -> bool:
        """Whether this subscriber was sent another event under `seq` than `text`."""
        if seq > self.last_seq:
            return False
        for sent_seq, sent in self.recent:
            if sent_seq == seq:
                return sent != text and json.loads(sent) != json.loads(text)
        return True

    async def _reset(self, last_seq: int) -> None:
        """Tell the client to drop what it has after `last_seq` (it reloads the thread)."""
        self.last_seq = last_seq
        self.held.clear()
        self.recent.clear()  # what was sent before is dropped: a second copy is no reset
        await self.send(json.dumps({"type": "reset", "lastSeq": last_seq}))


def _stored_if_lost(thread_id: Any, after: int, owner_seq: int | None) -> int | None:
    """The thread's last stored seq when a client that was sent up to `after` saw events
    that exist nowhere (else None): beyond what is stored, with no run streaming (whose
    process may hold them unstored) or beyond this process's run's numbering. The run is
    looked for first: a run that is not running any more has stored everything."""
    from agents_core.models import Run, Thread

    if owner_seq is None and Run.objects.running().filter(thread_id=thread_id).exists():
        return None
    last = Thread.objects.values_list("last_seq", flat=True).get(pk=thread_id)
    return last if after > max(last, owner_seq or 0) else None
