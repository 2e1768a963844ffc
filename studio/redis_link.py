"""Redis pub/sub spoken directly on an event loop: one connection that publishes, one that
subscribes, each an asyncio protocol whose replies hiredis parses (RESP).

The event bus (agents_core/runtime/bus) carries a thread's events between processes this way and
not as channel-layer messages: on the layer each message costs redis-py's read with a
timeout, msgpack, a queue per consumer, a task per message and the consumer's dispatch,
and a publish from the loop takes several wake-ups (which is why it went through a thread
of its own). Here a publish is one write of every message a loop pass has (their replies,
the receivers' counts, come back in order), and a read hands every message it holds to
its callback at once, in the loop's own `data_received`.

Pub/sub is the same on every Redis database, so the URL's database number does not matter;
its host, port, user, password and TLS do (`redis.connection.parse_url`).
"""

from __future__ import annotations

import asyncio
import functools
import logging
import ssl
from collections import deque
from collections.abc import Callable
from typing import Any

logger = logging.getLogger(__name__)

Reply = Callable[[Any], None]
RETRY_SECONDS = 1.0
SKIP = b"*3\r\n$6\r\nCLIENT\r\n$5\r\nREPLY\r\n$4\r\nSKIP\r\n"  # no reply to the next command


def command(*parts: bytes) -> bytes:
    """One RESP command."""
    out = [b"*%d\r\n" % len(parts)]
    for part in parts:
        out += (b"$%d\r\n" % len(part), part, b"\r\n")
    return b"".join(out)


class LinkError(ConnectionError):
    """The connection to Redis failed or closed."""


class _Protocol(asyncio.Protocol):
    def __init__(
        self,
        on_message: Callable[[bytes, bytes], None] | None,
        on_lost: Callable[[], None] | None = None,
    ) -> None:
        import hiredis

        self.reader = hiredis.Reader()
        self.transport: asyncio.Transport | None = None
        self.waiting: deque[Reply] = deque()
        self.on_message = on_message
        self.on_lost = on_lost
        self.closed = False

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = transport  # type: ignore[assignment]

    def data_received(self, data: bytes) -> None:
        self.reader.feed(data)
        while True:
            reply = self.reader.gets()
            if reply is False:
                return
            if self.on_message is not None and type(reply) is list and reply[0] == b"message":
                try:
                    self.on_message(reply[1], reply[2])
                except Exception:  # noqa: BLE001 - one bad message must not stop the rest
                    logger.exception("Handling a Redis message failed")
            elif self.waiting:
                self.waiting.popleft()(reply)

    def connection_lost(self, exc: Exception | None) -> None:
        self.closed = True
        self.transport = None
        waiting, self.waiting = self.waiting, deque()
        for reply in waiting:
            reply(LinkError(str(exc or "closed")))
        if self.on_lost is not None:
            self.on_lost()

    def send(self, payload: bytes, replies: list[Reply]) -> None:
        if self.transport is None or self.closed:
            for reply in replies:
                reply(LinkError("not connected"))
            return
        self.waiting.extend(replies)
        self.transport.write(payload)


async def _open(
    url: str,
    on_message: Callable[[bytes, bytes], None] | None = None,
    on_lost: Callable[[], None] | None = None,
) -> _Protocol:
    from redis.connection import SSLConnection, parse_url

    options = parse_url(url)
    loop = asyncio.get_running_loop()
    tls = options.get("connection_class") is SSLConnection
    context = ssl.create_default_context() if tls else None
    _, protocol = await loop.create_connection(
        lambda: _Protocol(on_message, on_lost),
        options.get("host", "127.0.0.1"),
        options.get("port", 6379),
        ssl=context,
    )
    if options.get("password"):
        parts = [b"AUTH"]
        if options.get("username"):
            parts.append(options["username"].encode())
        parts.append(options["password"].encode())
        done: asyncio.Future = loop.create_future()
        protocol.send(command(*parts), [done.set_result])
        answer = await done
        if isinstance(answer, Exception):
            if protocol.transport is not None:
                protocol.transport.close()
            raise LinkError(f"Redis refused the credentials: {answer}")
    return protocol


class Link:
    """An event loop's two connections to one Redis: `publish` and `subscribe`."""

    def __init__(self, url: str, on_message: Callable[[bytes, bytes], None]) -> None:
        self.url = url
        self.on_message = on_message
        self.loop = asyncio.get_running_loop()
        self.pub: _Protocol | None = None
        self.sub: _Protocol | None = None
        self.opening: dict[str, asyncio.Task] = {}
        self.channels: dict[bytes, asyncio.Future] = {}  # subscribed (or asked) -> confirmed
        self.backlog: list[tuple[bytes, list[Reply]]] = []  # published while connecting
        self.down_until = 0.0  # Redis was unreachable: publishes fail at once until then
        self.closing = False

    # --- publishing ------------------------------------------------------------------------
    def publish(self, messages: list[tuple[bytes, bytes, bool]], counted: Reply) -> None:
        """Publish every `(channel, data, count)` in one write. `counted` gets how many
        subscribers received each message whose `count` is true, as a list in order (or
        the LinkError when Redis cannot be reached: those messages are lost to other
        processes, whose sockets replay them from the store). Redis does not answer the
        others (`CLIENT REPLY SKIP`): no read, no wake-up of the loop for them."""
        if not messages:
            return
        counts: list[Any] = []
        total = sum(1 for _, _, count in messages if count)

        def one(reply: Any) -> None:
            counts.append(reply)
            if len(counts) == total:
                failure = next((c for c in counts if isinstance(c, Exception)), None)
                counted(failure if failure is not None else [int(c) for c in counts])

        payload = b"".join(
            (b"" if count else SKIP) + command(b"PUBLISH", channel, data)
            for channel, data, count in messages
        )
        replies: list[Reply] = [one] * total
        if self.pub is not None and not self.pub.closed:
            self.pub.send(payload, replies)
            return
        if self.loop.time() < self.down_until:
            counted(LinkError("Redis is unreachable"))
            return
        self.backlog.append((payload, replies))
        if "pub" not in self.opening:
            self.opening["pub"] = self.loop.create_task(self._open_pub())

    async def _open_pub(self) -> None:
        try:
            self.pub = await _open(self.url, None)
        except (OSError, LinkError) as exc:
            logger.warning("Redis (publishing live events) is unreachable: %s", exc)
            self.down_until = self.loop.time() + RETRY_SECONDS
            failed = LinkError(str(exc))
            for _, replies in self.backlog:
                for reply in replies:
                    reply(failed)
        else:
            for payload, replies in self.backlog:
                self.pub.send(payload, replies)
        finally:
            self.backlog = []
            del self.opening["pub"]

    # --- subscribing -----------------------------------------------------------------------
    async def subscribe(self, channel: bytes) -> None:
        """Subscribe (once per channel) and return when Redis confirmed it: a message
        published after this returns is received."""
        found = self.channels.get(channel)
        if found is None or (found.done() and found.exception() is not None):
            found = self.channels[channel] = self._confirmation()
            try:
                sub = await self._sub()
            except BaseException:
                if self.channels.get(channel) is found:
                    del self.channels[channel]
                raise
            sub.send(command(b"SUBSCRIBE", channel), [functools.partial(_settle, found)])
        await asyncio.shield(found)

    def _confirmation(self) -> asyncio.Future:
        """A subscription's confirmation (its failure is read even when nobody waits)."""
        future = self.loop.create_future()
        future.add_done_callback(lambda done: done.cancelled() or done.exception())
        return future

    def unsubscribe(self, channel: bytes) -> None:
        if self.channels.pop(channel, None) is not None and self.sub is not None:
            self.sub.send(command(b"UNSUBSCRIBE", channel), [lambda reply: None])

    def subscribed(self, channel: bytes) -> bool:
        found = self.channels.get(channel)
        return found is not None and found.done() and found.exception() is None

    async def _sub(self) -> _Protocol:
        if self.sub is not None and not self.sub.closed:
            return self.sub
        task = self.opening.get("sub")
        if task is None:
            task = self.opening["sub"] = self.loop.create_task(self._open_sub())
        return await asyncio.shield(task)

    async def _open_sub(self) -> _Protocol:
        try:
            self.sub = await _open(self.url, self.on_message, self._sub_lost)
            return self.sub
        finally:
            del self.opening["sub"]

    def _sub_lost(self) -> None:
        """Subscribe again to every channel, on a new connection, until Redis answers (what
        was published meanwhile is lost to this process: its sockets replay it)."""
        if not self.closing and not self.loop.is_closed():
            self.loop.create_task(self._resubscribe())

    async def _resubscribe(self) -> None:
        channels = list(self.channels)
        for name in channels:
            self.channels[name] = self._confirmation()
        while not self.closing:
            try:
                sub = await self._sub()
            except (OSError, LinkError) as exc:
                logger.warning("Redis (live events) unreachable, retrying: %s", exc)
                await asyncio.sleep(RETRY_SECONDS)
                continue
            for name in channels:
                found = self.channels.get(name)
                if found is not None:
                    sub.send(command(b"SUBSCRIBE", name), [functools.partial(_settle, found)])
            return

    def close(self) -> None:
        self.closing = True
        for protocol in (self.pub, self.sub):
            if protocol is not None and protocol.transport is not None:
                protocol.transport.close()


def _settle(future: asyncio.Future, reply: Any) -> None:
    if future.done():
        return
    if isinstance(reply, Exception):
        future.set_exception(LinkError(str(reply)))
    else:
        future.set_result(None)
