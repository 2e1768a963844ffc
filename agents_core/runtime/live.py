"""Live delivery of a thread's events: who numbers them, who is told at once.

While a run streams, the process executing it is the only writer of its thread's events
(one running run per thread): its `Owner` numbers them itself, from the thread's
`last_seq` read under the thread's row lock when the run starts, and is registered here
as the thread's owner. Each event goes at once to the thread's subscribers in this
process (websocket consumers registered with `subscribe`) and, through the channel layer,
to those of other processes (`Broadcaster`: one publish per event-loop tick); the stream
writer stores it behind (runtime/events.py). The owner's `tail` holds what it delivered
and has not stored yet, for a consumer of this process that replays.

Other writers (signals, titles, async tool results: sync code in Celery tasks or views)
go through `events.events_emit_sync`: under the thread's row lock it looks for a running
run claimed by a process; when there is one, the events are handed to that process
(runtime/handoff.py) and its sink numbers them among its own. Otherwise the database numbers them,
as it always did.
"""

from __future__ import annotations

import asyncio
import logging
import threading
from collections import defaultdict
from concurrent.futures import ThreadPoolExecutor
from typing import Any, Protocol

logger = logging.getLogger(__name__)

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


def subscribe(thread_id: Any, subscriber: Subscriber) -> None:
    with _lock:
        _subscribers[str(thread_id)].add(subscriber)


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


class Broadcaster:
    """Publishes the events of every sink of one event loop to the threads' groups.

    What the sinks add during one pass of the loop goes out together at the end of it,
    each thread's events as one `stream.events` message: on the pub/sub layer with a
    blocking Redis client in a thread of its own (one pipeline; the loop is not asked for
    the wake-ups a publish takes there), on other layers from the loop. While a publish is
    under way, what follows waits for it, so messages leave in order.

    On the pub/sub layer a thread whose only subscribers are this process's sockets (the
    inline executor's usual case: the chat's socket is in the Daphne that runs its run) is
    not published at all: Redis counts the processes subscribed to its group (PUBSUB
    NUMSUB, asked with the publish, again every ALONE_SECONDS). A socket of another
    process that subscribes meanwhile gets the events it missed from the store once that
    check sees it (within ALONE_SECONDS), then live ones."""

    _by_loop: dict[asyncio.AbstractEventLoop, Broadcaster] = {}
    _pool: ThreadPoolExecutor | None = None
    ALONE_SECONDS = 1.0

    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        from channels.layers import get_channel_layer

        from studio.layers import sync_publisher

        self.loop = loop
        self.layer = get_channel_layer()
        self.publisher = sync_publisher(self.layer) if self.layer is not None else None
        self.pending: dict[str, list[Any]] = {}
        self.notices: dict[str, int] = {}
        self.alone: set[str] = set()  # groups that need no publishing
        self.next_check: dict[str, float] = {}  # group -> when to count its subscribers
        self.busy = False
        self.scheduled = False

    @classmethod
    def for_loop(cls) -> Broadcaster:
        loop = asyncio.get_running_loop()
        found = cls._by_loop.get(loop)
        if found is None:
            for key in [key for key in cls._by_loop if key.is_closed()]:
                del cls._by_loop[key]
            found = cls._by_loop[loop] = cls(loop)
        return found

    def add(self, group: str, seq: int, text: str) -> None:
        self.pending.setdefault(group, []).append([seq, text])
        self._schedule()

    def stored(self, group: str, seq: int) -> None:
        """Tell the group's subscribers of other processes that events up to `seq` are
        stored (one that waits for a gap to be stored replays then)."""
        self.notices[group] = seq
        self._schedule()

    def _schedule(self) -> None:
        if self.layer is None or self.scheduled or self.busy:
            return
        self.scheduled = True
        self.loop.call_soon(self._flush)

    def _flush(self) -> None:
        self.scheduled = False
        if self.busy or not (self.pending or self.notices):
            return
        now = self.loop.time()
        # Threads with no subscriber in another process (and every one of this process
        # told directly) are not published; checked again every ALONE_SECONDS.
        check = [
            group
            for group in {*self.pending, *self.notices}
            if self.publisher is not None and self.next_check.get(group, now) <= now
        ]
        messages: list[tuple[str, dict[str, Any]]] = [
            (group, {"type": "stream.events", "encoded": items})
            for group, items in self.pending.items()
            if group not in self.alone
        ]
        messages += [
            (group, {"type": "stream.stored", "upTo": seq})
            for group, seq in self.notices.items()
            if group not in self.alone
        ]
        self.pending, self.notices = {}, {}
        if not messages and not check:
            return
        self.busy = True
        if self.publisher is not None:
            if Broadcaster._pool is None:
                Broadcaster._pool = ThreadPoolExecutor(1, thread_name_prefix="stream-publish")
            future = self.loop.run_in_executor(Broadcaster._pool, self._publish, messages, check)
        else:
            from studio.layers import group_send_many

            future = self.loop.create_task(group_send_many(self.layer, messages))
        future.add_done_callback(self._done)

    def _publish(
        self, messages: list[tuple[str, dict[str, Any]]], check: list[str]
    ) -> dict[str, int]:
        """The publishing thread: the messages, then how many processes subscribe to each
        group of `check`."""
        assert self.publisher is not None
        if messages:
            self.publisher.publish_many(messages)
        return self.publisher.subscribers(check) if check else {}

    def _done(self, future: asyncio.Future) -> None:
        self.busy = False
        if not future.cancelled() and future.exception() is not None:
            logger.error("Publishing stream events failed", exc_info=future.exception())
        elif not future.cancelled() and isinstance(future.result(), dict):
            self._note_alone(future.result())
        if self.pending or self.notices:
            self._schedule()

    def _note_alone(self, counts: dict[str, int]) -> None:
        """Which groups have no subscriber but this process's sockets (each told directly
        by `deliver`): their events need no publishing for ALONE_SECONDS."""
        loop_layer = self.layer._get_layer()
        now = self.loop.time()
        until = now + self.ALONE_SECONDS
        if len(self.next_check) > 1000:  # forget the threads that stopped streaming
            for group in [g for g, at in self.next_check.items() if at < now - 60]:
                del self.next_check[group]
                self.alone.discard(group)
        for group, count in counts.items():
            self.next_check[group] = until
            members = len(loop_layer.groups.get(loop_layer._get_group_channel_name(group), ()))
            told = len(_subscribers.get(group.removeprefix("thread_"), ()))
            if count - (1 if members else 0) == 0 and members <= told:
                self.alone.add(group)
            else:
                self.alone.discard(group)
