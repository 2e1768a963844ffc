"""group_send_many: one Redis pipeline per shard on the pub/sub layer, every message
delivered to its group's subscribers in order; other layers get group_send one by one."""

from __future__ import annotations

import asyncio
import uuid

from channels.layers import InMemoryChannelLayer
from channels_redis.pubsub import RedisPubSubChannelLayer
from django.conf import settings

from studio.layers import group_send_many


async def test_the_pubsub_layer_publishes_many_groups_in_one_pipeline():
    layer = RedisPubSubChannelLayer(
        hosts=[settings.REDIS_URL], prefix=f"test-layers-{uuid.uuid4().hex[:8]}"
    )
    try:
        channels = {}
        for group in ("alpha", "beta", "gamma"):
            channels[group] = await layer.new_channel()
            await layer.group_add(group, channels[group])
        messages = [
            (group, {"type": "stream.events", "n": n})
            for n in range(3)
            for group in ("alpha", "beta", "gamma")
        ]
        assert await group_send_many(layer, messages) == "pipelined"
        for group, channel in channels.items():
            got = [await asyncio.wait_for(layer.receive(channel), 5) for _ in range(3)]
            assert [m["n"] for m in got] == [0, 1, 2], group
        # Nothing else arrives: each message reached its own group only.
        for channel in channels.values():
            try:
                extra = await asyncio.wait_for(layer.receive(channel), 0.2)
            except TimeoutError:
                extra = None
            assert extra is None
    finally:
        await layer.flush()


async def test_other_layers_get_group_send_for_each_message():
    layer = InMemoryChannelLayer()
    channel = await layer.new_channel()
    await layer.group_add("solo", channel)
    assert (
        await group_send_many(
            layer, [("solo", {"type": "x", "n": 1}), ("solo", {"type": "x", "n": 2})]
        )
        == "one-by-one"
    )
    assert [(await layer.receive(channel))["n"] for _ in range(2)] == [1, 2]


async def test_the_sync_publisher_reaches_the_pubsub_layers_subscribers_from_a_thread():
    from studio.layers import sync_publisher

    layer = RedisPubSubChannelLayer(
        hosts=[settings.REDIS_URL], prefix=f"test-layers-{uuid.uuid4().hex[:8]}"
    )
    try:
        channels = {}
        for group in ("alpha", "beta"):
            channels[group] = await layer.new_channel()
            await layer.group_add(group, channels[group])
        publisher = sync_publisher(layer)
        assert publisher is sync_publisher(layer)  # one per layer
        messages = [
            (group, {"type": "stream.events", "n": n})
            for n in range(3)
            for group in ("alpha", "beta")
        ]
        # Blocking, from a thread: the layer's names, shards and serializer.
        await asyncio.to_thread(publisher.publish_many, messages)
        for group, channel in channels.items():
            got = [await asyncio.wait_for(layer.receive(channel), 5) for _ in range(3)]
            assert [m["n"] for m in got] == [0, 1, 2], group
    finally:
        await layer.flush()


def test_layers_without_a_sync_publisher_are_published_on_the_loop():
    from channels_redis.core import RedisChannelLayer

    from studio.layers import sync_publisher

    assert sync_publisher(InMemoryChannelLayer()) is None
    assert sync_publisher(RedisChannelLayer(hosts=[settings.REDIS_URL])) is None
