"""The studio's pub/sub channel layer reads Redis only when Redis sends something: its
reader blocks on the connection (no read timeout to poll with), and while nothing is
subscribed it waits for the next subscription; messages still arrive at once."""

from __future__ import annotations

import asyncio
import uuid

from django.conf import settings

from studio.pubsub_layer import PubSubChannelLayer


async def _round_trip(layer: PubSubChannelLayer, channel: str, n: int) -> None:
    """Send message `n` to `channel` and receive it back."""
    await layer.send(channel, {"type": "x", "n": n})
    assert (await asyncio.wait_for(layer.receive(channel), 5))["n"] == n


def _layer() -> PubSubChannelLayer:
    return PubSubChannelLayer(
        hosts=[settings.REDIS_URL], prefix=f"test-pubsub-{uuid.uuid4().hex[:8]}"
    )


async def test_the_reader_waits_on_the_socket_and_never_reads_with_a_timeout():
    layer = _layer()
    try:
        channel = await layer.new_channel()
        await _round_trip(layer, channel, 0)
        shard = layer._get_layer()._shards[0]
        pubsub = shard._pubsub
        timeouts: list[float | None] = []
        original = pubsub.get_message

        async def spy(*args, **kwargs):
            timeouts.append(kwargs.get("timeout", 0.0))
            return await original(*args, **kwargs)

        pubsub.get_message = spy
        for n in range(1, 4):
            await _round_trip(layer, channel, n)
        assert timeouts, "the reader read nothing after the messages"
        assert set(timeouts) == {None}
    finally:
        await layer.flush()


async def test_a_subscription_after_the_last_one_left_is_read_again():
    layer = _layer()
    try:
        first = await layer.new_channel()
        await _round_trip(layer, first, 1)
        # Cancelling a receive unsubscribes the channel (channels_redis' cleanup).
        waiting = asyncio.ensure_future(layer.receive(first))
        await asyncio.sleep(0)
        waiting.cancel()
        await asyncio.gather(waiting, return_exceptions=True)
        shard = layer._get_layer()._shards[0]
        for _ in range(500):
            if not shard._pubsub.subscribed:
                break
            await asyncio.sleep(0.01)
        assert not shard._pubsub.subscribed
        second = await layer.new_channel()
        await layer.group_add("again", second)
        await layer.group_send("again", {"type": "x", "n": 2})
        assert (await asyncio.wait_for(layer.receive(second), 5))["n"] == 2
    finally:
        await layer.flush()
