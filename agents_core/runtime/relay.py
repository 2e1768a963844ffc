"""A thread's live events between processes: Redis pub/sub on a channel per thread,
spoken directly on each event loop (studio/redis_link.py), beside the channel layer.

The process that runs a thread's run publishes what it delivered to its own sockets
(live.Broadcaster); a process whose sockets follow the thread subscribes to its channel
(`follow`, before a socket replays) and hands each message to those sockets
(`Subscriber.live_events`, `Subscriber.live_stored`). A message is bytes:

    E<seq> <event JSON>\\n<seq> <event JSON>...   events, in order (JSON holds no newline)
    S<seq>                                        the run's events up to <seq> are stored

It needs a Redis channel layer (its URL and prefix); with another layer (in-memory: one
process) `link()` is None and the layer's group carries the events.
"""

from __future__ import annotations

import asyncio
import logging
from typing import Any

from agents_core.runtime import live

logger = logging.getLogger(__name__)

_links: dict[asyncio.AbstractEventLoop, Any] = {}
REDIS_LAYER_MODULES = ("channels_redis", "studio.pubsub_layer")
_prefix: list[bytes] = []


def _redis_url() -> str | None:
    """The Redis URL of the default channel layer (None when it is not a one-host Redis
    layer)."""
    from channels.layers import get_channel_layer

    layer = get_channel_layer()
    hosts: list[Any] = []
    if layer is not None and type(layer).__module__.startswith(REDIS_LAYER_MODULES):
        kwargs = vars(layer).get("_kwargs")  # the pub/sub layer's configuration
        hosts = list((kwargs or {}).get("hosts") or vars(layer).get("hosts") or [])
    url = None
    if len(hosts) == 1:
        host = hosts[0]
        url = host if isinstance(host, str) else host.get("address")
    return url


def link() -> Any | None:
    """The running loop's link to Redis for live events, or None (no Redis layer)."""
    loop = asyncio.get_running_loop()
    if loop in _links:
        return _links[loop]
    for key in [key for key in _links if key.is_closed()]:
        del _links[key]
    url = _redis_url()
    found = None
    if url:
        from studio.redis_link import Link

        found = Link(url, lambda channel, data: _received(loop, channel, data))
    _links[loop] = found
    return found


def _channel_prefix() -> bytes:
    if not _prefix:
        from django.conf import settings

        prefix = settings.CHANNEL_LAYERS["default"].get("CONFIG", {}).get("prefix", "")
        _prefix.append(f"{prefix}live.".encode())
    return _prefix[0]


def channel(thread_id: Any) -> bytes:
    return _channel_prefix() + str(thread_id).encode()


def events_frame(items: list[tuple[int, str]]) -> bytes:
    return b"E" + "\n".join(f"{seq} {text}" for seq, text in items).encode()


def stored_frame(seq: int) -> bytes:
    return b"S%d" % seq


async def follow(thread_id: Any) -> None:
    """Receive the thread's live events from other processes (once per loop); returns
    when Redis confirmed the subscription, so a replay after it misses nothing."""
    found = link()
    if found is None:
        return
    try:
        await found.subscribe(channel(thread_id))
    except (OSError, ConnectionError) as exc:
        # Its socket gets the other processes' events from the store when it reconnects.
        logger.warning("Following thread %s live: Redis is unreachable (%s)", thread_id, exc)


def unfollow(thread_id: Any) -> None:
    """After the loop's last socket of the thread left."""
    found = _links.get(asyncio.get_running_loop())
    if found is not None:
        found.unsubscribe(channel(thread_id))


def following(thread_id: Any) -> bool:
    found = _links.get(asyncio.get_running_loop())
    return found is not None and found.subscribed(channel(thread_id))


def _received(loop: asyncio.AbstractEventLoop, name: bytes, data: bytes) -> None:
    thread_id = name[len(_channel_prefix()) :].decode()
    if live.owner(thread_id) is not None:
        return  # the run is in this process, whose sockets it tells directly
    subscribers = [s for s in live.subscribers(thread_id) if s.loop is loop]
    if not subscribers:
        return
    kind, body = data[:1], data[1:]
    if kind == b"E":
        items = []
        for line in body.decode().split("\n"):
            seq, _, text = line.partition(" ")
            items.append((int(seq), text))
        for subscriber in subscribers:
            subscriber.live_events(items)
    elif kind == b"S":
        for subscriber in subscribers:
            subscriber.live_stored(int(body))


class Broadcaster:
    """Publishes the events of every sink of one event loop to the other processes that
    follow their threads.

    What the sinks add during one pass of the loop goes out together at the end of it:
    over Redis, each thread's events as one message and every message in one write;
    without a Redis layer (in-memory: one process) as the layer's group messages
    (`stream.events`, `stream.stored`), from the loop, one batch at a time.

    A thread followed by no other process (the inline executor's usual case: the chat's
    socket is in the process that runs its run, and told directly) is not published.
    Redis answers a publish with how many connections received it; it is asked at a
    thread's first publish and every ALONE_SECONDS after (the other publishes ask for no
    answer), and a thread that no other process received is not published until the next
    count. A socket of another process that follows it meanwhile gets the events it
    missed from the store once that count sees it (within ALONE_SECONDS), then live
    ones."""

    _by_loop: dict[asyncio.AbstractEventLoop, Broadcaster] = {}
    ALONE_SECONDS = 1.0

    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        self.loop = loop
        self.link = link()
        self.layer: Any = None
        if self.link is None:
            from channels.layers import get_channel_layer

            self.layer = get_channel_layer()
        self.pending: dict[str, list[tuple[int, str]]] = {}  # thread -> events
        self.notices: dict[str, int] = {}  # thread -> stored up to
        self.alone: set[str] = set()  # threads no other process follows
        self.count_at: dict[str, float] = {}  # thread -> when to count its followers next
        self.busy = False  # a layer batch under way (the layer's path)
        self.scheduled = False
        self.warned = False

    @classmethod
    def for_loop(cls) -> Broadcaster:
        loop = asyncio.get_running_loop()
        found = cls._by_loop.get(loop)
        if found is None:
            for key in [key for key in cls._by_loop if key.is_closed()]:
                del cls._by_loop[key]
            found = cls._by_loop[loop] = cls(loop)
        return found

    def add(self, thread_id: str, seq: int, text: str) -> None:
        self.pending.setdefault(thread_id, []).append((seq, text))
        self._schedule()

    def stored(self, thread_id: str, seq: int) -> None:
        """Tell the thread's followers in other processes that its events up to `seq` are
        stored (a socket that waits for a gap to be stored replays then)."""
        self.notices[thread_id] = seq
        self._schedule()

    def _schedule(self) -> None:
        if self.scheduled or self.busy or (self.link is None and self.layer is None):
            return
        self.scheduled = True
        self.loop.call_soon(self._flush)

    def _flush(self) -> None:
        self.scheduled = False
        if self.busy or not (self.pending or self.notices):
            return
        pending, notices = self.pending, self.notices
        self.pending, self.notices = {}, {}
        if self.link is not None:
            self._publish(pending, notices)
            return
        from agents_core.runtime.handoff import thread_group
        from studio.layers import group_send_many

        messages: list[tuple[str, dict[str, Any]]] = [
            (thread_group(t), {"type": "stream.events", "encoded": [list(i) for i in items]})
            for t, items in pending.items()
        ]
        messages += [
            (thread_group(t), {"type": "stream.stored", "upTo": seq}) for t, seq in notices.items()
        ]
        self.busy = True
        self.loop.create_task(group_send_many(self.layer, messages)).add_done_callback(self._done)

    def _publish(self, pending: dict[str, list[tuple[int, str]]], notices: dict[str, int]) -> None:
        """Each thread's events and stored notice, all in one write; a thread's followers
        are counted at its first publish and every ALONE_SECONDS after."""
        now = self.loop.time()
        counted: list[str] = []
        messages: list[tuple[bytes, bytes, bool]] = []
        for thread_id in {**pending, **notices}:
            due = self.count_at.get(thread_id, 0.0) <= now
            if thread_id in self.alone and not due:
                continue
            if due:
                counted.append(thread_id)
                self.count_at[thread_id] = now + self.ALONE_SECONDS
            name = channel(thread_id)
            frames = [events_frame(pending[thread_id])] if thread_id in pending else []
            if thread_id in notices:
                frames.append(stored_frame(notices[thread_id]))
            # The thread's last message is the one counted.
            messages += [
                (name, frame, due and n == len(frames) - 1) for n, frame in enumerate(frames)
            ]
        if messages:
            assert self.link is not None
            self.link.publish(messages, lambda counts: self._counted(counted, counts))

    def _counted(self, threads: list[str], counts: list[int] | Exception) -> None:
        """Which threads no other process follows: not published until counted again."""
        if isinstance(counts, Exception):
            if not self.warned:
                self.warned = True
                logger.warning("Publishing live events failed (%s); they are stored", counts)
            return
        self.warned = False
        now = self.loop.time()
        if len(self.count_at) > 1000:  # forget the threads that stopped streaming
            for thread_id in [t for t, at in self.count_at.items() if at < now - 60]:
                del self.count_at[thread_id]
                self.alone.discard(thread_id)
        for thread_id, count in zip(threads, counts, strict=True):
            if count - (1 if following(thread_id) else 0) <= 0:
                self.alone.add(thread_id)
            else:
                self.alone.discard(thread_id)

    def _done(self, task: asyncio.Task) -> None:
        self.busy = False
        if not task.cancelled() and task.exception() is not None:
            logger.error("Publishing stream events failed", exc_info=task.exception())
        if self.pending or self.notices:
            self._schedule()
