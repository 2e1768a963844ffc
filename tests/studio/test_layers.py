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
    layer = RedisPubSubChannelLayer(hosts=[settings.REDIS_URL],
                                    prefix=f"test-layers-{uuid.uuid4().hex[:8]}")
    try:
        channels = {}
        for group in ("alpha", "beta", "gamma"):
            channels[group] = await layer.new_channel()
            await layer.group_add(group, channels[group])
        messages = [(group, {"type": "stream.events", "n": n})
                    for n in range(3) for group in ("alpha", "beta", "gamma")]
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
    assert await group_send_many(layer, [("solo", {"type": "x", "n": 1}),
                                         ("solo", {"type": "x", "n": 2})]) == "one-by-one"
    assert [(await layer.receive(channel))["n"] for _ in range(2)] == [1, 2]
