"""Sending many group messages at once on the channel layer.

`group_send_many(layer, messages)` publishes `[(group, message), ...]`. On channels_redis'
pub/sub layer (the studio's default) every shard gets one Redis pipeline: one round trip
for all of them, where `group_send` takes one round trip each, one at a time (the shard
connection is behind a lock). On any other layer it falls back to `group_send` for each.

`sync_publisher(layer)` does the same from a thread, with a blocking Redis client (a
thread's events do not come this way: the event bus, agents_core/runtime/bus, speaks to
Redis itself). It exists for the pub/sub layer only (None otherwise: in-memory and core
layers are published on the loop).
`group_send_sync(group, message)` is what synchronous code (services, Celery tasks, the
websocket consumer's handlers) calls: the blocking publisher where there is one, else
`async_to_sync(group_send)`, which in a web process waits for its event loop.

The pipeline reuses the layer's own group-channel naming, sharding, serializer and shard
connection (attributes that are private to channels_redis 4.x, whose range pyproject.toml
pins); tests/studio/test_layers.py checks the fast path is the one taken, so an upgrade
that changes them fails a test instead of silently falling back.
"""

from __future__ import annotations

import asyncio
import threading
import weakref
from collections import defaultdict
from typing import Any


def _pubsub_loop_layer(layer: Any) -> Any | None:
    from channels_redis.pubsub import RedisPubSubChannelLayer

    if not isinstance(layer, RedisPubSubChannelLayer):
        return None
    loop_layer = layer._get_layer()
    needed = ("_get_group_channel_name", "_get_shard", "_shards", "channel_layer")
    return loop_layer if all(hasattr(loop_layer, name) for name in needed) else None


async def group_send_many(layer: Any, messages: list[tuple[str, dict[str, Any]]]) -> str:
    """Publish every (group, message); returns "pipelined" or "one-by-one" (tests)."""
    if not messages:
        return "none"
    loop_layer = _pubsub_loop_layer(layer)
    if loop_layer is None:
        for group, message in messages:
            await layer.group_send(group, message)
        return "one-by-one"
    by_shard = _encoded_by_shard(loop_layer, messages)
    await asyncio.gather(
        *(_publish_pipelined(loop_layer._shards[index], items) for index, items in by_shard.items())
    )
    return "pipelined"


def _encoded_by_shard(
    loop_layer: Any, messages: list[tuple[str, dict[str, Any]]]
) -> dict[int, list[tuple[str, bytes]]]:
    """(group channel, serialized message) pairs by the index of the layer's shard."""
    by_shard: dict[int, list[tuple[str, bytes]]] = defaultdict(list)
    for group, message in messages:
        channel = loop_layer._get_group_channel_name(group)
        index = loop_layer._shards.index(loop_layer._get_shard(channel))
        by_shard[index].append((channel, loop_layer.channel_layer.serialize(message)))
    return by_shard


async def _publish_pipelined(shard: Any, items: list[tuple[str, bytes]]) -> None:
    async with shard._lock:
        shard._ensure_redis()
        async with shard._redis.pipeline(transaction=False) as pipe:
            for channel, data in items:
                pipe.publish(channel, data)
            await pipe.execute()


class SyncPublisher:
    """Publishes group messages of a pub/sub layer from any thread (blocking).

    Channel names, sharding and serialisation are the layer's own: a loop layer built
    here only to name and shard (it connects nowhere), and the layer's serializer."""

    def __init__(self, layer: Any) -> None:
        import redis
        from channels_redis.pubsub import RedisPubSubLoopLayer

        self.naming = RedisPubSubLoopLayer(*layer._args, **layer._kwargs, channel_layer=layer)
        self.clients = []
        for shard in self.naming._shards:
            host = dict(shard.host)
            if "master_name" in host:
                raise TypeError("Sentinel shards are published on the loop.")
            address = host.pop("address", None)
            self.clients.append(
                redis.Redis.from_url(address, **host) if address else redis.Redis(**host)
            )

    def publish_many(self, messages: list[tuple[str, dict[str, Any]]]) -> None:
        for index, items in _encoded_by_shard(self.naming, messages).items():
            pipe = self.clients[index].pipeline(transaction=False)
            for channel, data in items:
                pipe.publish(channel, data)
            pipe.execute()

    def send_counted(self, channel: str, message: dict[str, Any]) -> int:
        """Publish a message to one channel; returns how many subscribers received it
        (0: nobody listens there)."""
        index = self.naming._shards.index(self.naming._get_shard(channel))
        data = self.naming.channel_layer.serialize(message)
        return int(self.clients[index].publish(channel, data))


_publishers: weakref.WeakKeyDictionary[Any, SyncPublisher | None] = weakref.WeakKeyDictionary()
_publishers_lock = threading.Lock()


def sync_publisher(layer: Any) -> SyncPublisher | None:
    """The layer's blocking publisher (one per layer), or None when it has none: not the
    pub/sub layer, or shards it cannot address by URL (Sentinel)."""
    from channels_redis.pubsub import RedisPubSubChannelLayer

    if not isinstance(layer, RedisPubSubChannelLayer):
        return None
    with _publishers_lock:
        if layer not in _publishers:
            try:
                _publishers[layer] = SyncPublisher(layer)
            except (AttributeError, TypeError):
                _publishers[layer] = None
        return _publishers[layer]


def group_send_sync(group: str, message: dict[str, Any]) -> None:
    """Publish a group message from synchronous code (see the module's docstring)."""
    groups_send_sync([(group, message)])


def groups_send_sync(messages: list[tuple[str, dict[str, Any]]]) -> None:
    """Publish `[(group, message), ...]` from synchronous code: on the pub/sub layer one
    pipelined write per shard."""
    from asgiref.sync import async_to_sync
    from channels.layers import get_channel_layer

    layer = get_channel_layer()
    if layer is None or not messages:
        return
    publisher = sync_publisher(layer)
    if publisher is not None:
        publisher.publish_many(messages)
    else:
        async_to_sync(group_send_many)(layer, messages)
