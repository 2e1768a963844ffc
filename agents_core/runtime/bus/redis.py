"""The bus between processes: Redis pub/sub on a channel per thread, spoken directly on
each event loop (studio/redis_link.py), and with a blocking client from sync code.

The process whose run numbers a thread's events publishes them (`Publisher`, one per
event loop); a process whose subscribers follow the thread subscribes to its channel
(`follow`, before a subscription replays) and hands each message to them. Sync code
(events the database numbered: a run's start, signals, async tool results) publishes
with `publish_sync`. A message is bytes:

    E<seq> <event JSON>\\n<seq> <event JSON>...   events, in order (JSON holds no newline)
    R<seq> <event JSON>...                         the same, numbered after a dead owner
    S<seq>                                         the run's events up to <seq> are stored

It speaks to the Redis of the channel layer (its URL and prefix); with another layer
(in-memory: one process, `make run`) there is nobody to publish to and `link()` is None:
this process's subscribers are told directly (bus/local.py).
"""

from __future__ import annotations

import asyncio
import logging
from typing import Any

from agents_core.runtime.bus.local import deliver, subscribers
from agents_core.runtime.bus.owners import owner

logger = logging.getLogger(__name__)

_links: dict[asyncio.AbstractEventLoop, Any] = {}
_clients: dict[str, Any] = {}
REDIS_LAYER_MODULES = ("channels_redis", "studio.pubsub_layer")
_prefix: list[bytes] = []


def redis_url() -> str | None:
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
    """The running loop's link to Redis, or None (no Redis layer)."""
    loop = asyncio.get_running_loop()
    if loop in _links:
        return _links[loop]
    for key in [key for key in _links if key.is_closed()]:
        del _links[key]
    url = redis_url()
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


def events_frame(items: list[tuple[int, str]], reset: bool = False) -> bytes:
    return (b"R" if reset else b"E") + "\n".join(f"{seq} {text}" for seq, text in items).encode()


def stored_frame(seq: int) -> bytes:
    return b"S%d" % seq


async def follow(thread_id: Any) -> None:
    """Receive the thread's events from other processes (once per loop); returns when
    Redis confirmed the subscription, so a replay after it misses nothing."""
    found = link()
    if found is None:
        return
    try:
        await found.subscribe(channel(thread_id))
    except (OSError, ConnectionError) as exc:
        # Its subscribers get the other processes' events from the store when they return.
        logger.warning("Following thread %s live: Redis is unreachable (%s)", thread_id, exc)


def unfollow(thread_id: Any) -> None:
    """After the loop's last subscriber of the thread left."""
    found = _links.get(asyncio.get_running_loop())
    if found is not None:
        found.unsubscribe(channel(thread_id))


def following(thread_id: Any) -> bool:
    found = _links.get(asyncio.get_running_loop())
    return found is not None and found.subscribed(channel(thread_id))


def _received(loop: asyncio.AbstractEventLoop, name: bytes, data: bytes) -> None:
    thread_id = name[len(_channel_prefix()) :].decode()
    if owner(thread_id) is not None:
        return  # the run is in this process, whose subscribers it tells directly
    found = [s for s in subscribers(thread_id) if s.loop is loop]
    if not found:
        return
    kind, body = data[:1], data[1:]
    if kind in (b"E", b"R"):
        items = []
        for line in body.decode().split("\n"):
            seq, _, text = line.partition(" ")
            items.append((int(seq), text))
        for subscriber in found:
            subscriber.live_events(items, kind == b"R")
    elif kind == b"S":
        for subscriber in found:
            subscriber.live_stored(int(body))


def publish_sync(batches: list[tuple[Any, list[tuple[int, str]]]], reset: bool = False) -> None:
    """Events stored already, from sync code (after the transaction that stored them
    commits): told at once to this process's subscribers of each thread and published to
    the other processes' in one pipelined write (a subscriber told twice sends an event
    once). Redis unreachable: the others replay them from the store when they return."""
    for thread_id, items in batches:
        deliver(str(thread_id), items, reset)
    url = redis_url()
    if not url or not batches:
        return
    import redis

    client = _clients.get(url)
    if client is None:
        client = _clients[url] = redis.Redis.from_url(url)
    try:
        pipe = client.pipeline(transaction=False)
        for thread_id, items in batches:
            pipe.publish(channel(thread_id), events_frame(items, reset))
        pipe.execute()
    except redis.RedisError as exc:
        logger.warning("Publishing stored events failed (%s); they are stored", exc)


class Publisher:
    """This event loop's way out for the events its runs number: each told at once to
    this process's subscribers, and published to the other processes that follow the
    thread at the end of the loop's pass, every thread's events as one message and every
    message in one write.

    A thread followed by no other process (the inline executor's usual case: the chat's
    socket is in the process that runs its run) is not published. Redis answers a
    publish with how many connections received it; it is asked at a thread's first
    publish and every ALONE_SECONDS after (the other publishes ask for no answer), and a
    thread that no other process received is not published until the next count. A
    subscriber of another process that follows it meanwhile gets the events it missed
    from the store once that count sees it (within ALONE_SECONDS), then live ones."""

    _by_loop: dict[asyncio.AbstractEventLoop, Publisher] = {}
    ALONE_SECONDS = 1.0

    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        self.loop = loop
        self.link = link()
        self.pending: dict[str, list[tuple[int, str]]] = {}  # thread -> events
        self.notices: dict[str, int] = {}  # thread -> stored up to
        self.alone: set[str] = set()  # threads no other process follows
        self.count_at: dict[str, float] = {}  # thread -> when to count its followers next
        self.scheduled = False
        self.warned = False

    @classmethod
    def for_loop(cls) -> Publisher:
        loop = asyncio.get_running_loop()
        found = cls._by_loop.get(loop)
        if found is None:
            for key in [key for key in cls._by_loop if key.is_closed()]:
                del cls._by_loop[key]
            found = cls._by_loop[loop] = cls(loop)
        return found

    def publish(self, thread_id: str, seq: int, text: str) -> None:
        deliver(thread_id, [(seq, text)])
        if self.link is not None:
            self.pending.setdefault(thread_id, []).append((seq, text))
            self._schedule()

    def stored(self, thread_id: str, seq: int) -> None:
        """Tell the thread's followers in other processes that its events up to `seq` are
        stored (a subscriber that waits for a gap to be stored replays then)."""
        if self.link is not None:
            self.notices[thread_id] = seq
            self._schedule()

    def _schedule(self) -> None:
        if not self.scheduled:
            self.scheduled = True
            self.loop.call_soon(self._flush)

    def _flush(self) -> None:
        """Each thread's events and stored notice, all in one write; a thread's followers
        are counted at its first publish and every ALONE_SECONDS after."""
        self.scheduled = False
        pending, notices = self.pending, self.notices
        self.pending, self.notices = {}, {}
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
