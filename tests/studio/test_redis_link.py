"""studio/redis_link.py against the real Redis: one write publishes many messages, in
order; only the messages that ask for it are answered (counted); a subscription is in place
when `subscribe` returns and is made again after its connection drops."""

from __future__ import annotations

import asyncio
import socket
import uuid

from django.conf import settings

from studio.redis_link import Link, LinkError


class Inbox:
    def __init__(self) -> None:
        self.messages: list[tuple[bytes, bytes]] = []
        self.arrived = asyncio.Event()

    def __call__(self, channel: bytes, data: bytes) -> None:
        self.messages.append((channel, data))
        self.arrived.set()

    async def wait_for(self, count: int) -> list[tuple[bytes, bytes]]:
        while len(self.messages) < count:
            self.arrived.clear()
            await asyncio.wait_for(self.arrived.wait(), 5)
        return self.messages


def _channel() -> bytes:
    return f"test-link-{uuid.uuid4().hex}".encode()


async def _counts(link: Link, messages: list[tuple[bytes, bytes, bool]]) -> object:
    answer: asyncio.Future = asyncio.get_running_loop().create_future()
    link.publish(messages, answer.set_result)
    return await asyncio.wait_for(answer, 5)


async def test_messages_published_in_one_write_arrive_in_order_and_asked_ones_are_counted():
    inbox = Inbox()
    follower = Link(settings.REDIS_URL, inbox)
    publisher = Link(settings.REDIS_URL, Inbox())
    first, second, nobody = _channel(), _channel(), _channel()
    try:
        await follower.subscribe(first)
        await follower.subscribe(second)
        assert follower.subscribed(first) and not follower.subscribed(nobody)
        counts = await _counts(
            publisher,
            [
                (first, b"1", False),
                (second, b"a", False),
                (first, b"2", True),
                (nobody, b"x", True),
                (first, b"3", False),
            ],
        )
        assert counts == [1, 0]  # the two that asked: one subscriber, none
        assert await inbox.wait_for(4) == [
            (first, b"1"),
            (second, b"a"),
            (first, b"2"),
            (first, b"3"),
        ]
        follower.unsubscribe(second)
        assert not follower.subscribed(second)
        for _ in range(50):  # Redis takes the unsubscribe on the other connection
            if await _counts(publisher, [(second, b"b", True)]) == [0]:
                break
        else:
            raise AssertionError("still subscribed")
    finally:
        follower.close()
        publisher.close()


async def test_a_subscription_whose_connection_dropped_is_made_again():
    inbox = Inbox()
    follower = Link(settings.REDIS_URL, inbox)
    publisher = Link(settings.REDIS_URL, Inbox())
    name = _channel()
    try:
        await follower.subscribe(name)
        assert follower.sub is not None and follower.sub.transport is not None
        follower.sub.transport.abort()  # as when Redis restarts
        for _ in range(100):
            await asyncio.sleep(0.05)
            if follower.subscribed(name):
                break
        assert follower.subscribed(name)
        assert await _counts(publisher, [(name, b"again", True)]) == [1]
        assert await inbox.wait_for(1) == [(name, b"again")]
    finally:
        follower.close()
        publisher.close()


async def test_publishing_while_redis_is_unreachable_reports_it_and_does_not_wait():
    with socket.socket() as sock:  # a port nothing listens on
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    link = Link(f"redis://127.0.0.1:{port}/0", Inbox())
    failure = await _counts(link, [(_channel(), b"lost", True)])
    assert isinstance(failure, LinkError)
    # Until it is retried, a publish fails at once, without a connection attempt.
    assert isinstance(await _counts(link, [(_channel(), b"lost", True)]), LinkError)
    assert "pub" not in link.opening
    link.close()
