"""The studio's channel layer: channels_redis' pub/sub layer, reading Redis without polling.

channels_redis' shard connection reads its subscriptions in a loop that asks redis-py for
a message with a 0.1 s timeout, and sleeps 0.1 s at a time while it has none: ten
wake-ups a second in every process that ever subscribed (each web process, each run
worker), each a read attempt under an asyncio timeout. That is most of what those
processes spend idle, and with one chat streaming it is a noticeable share of the CPU per
delta (docs/benchmarks.md, "Idle processes").

Here a shard's reader blocks on its connection until Redis sends something (a message, a
subscription's confirmation) and, while nothing is subscribed, waits for the next
subscription instead of sleeping in a loop. Sending a SUBSCRIBE does not read the
connection (redis-py writes it, the reader gets the confirmation), so the blocked read
and new subscriptions do not race. Everything else (naming, sharding, serialization,
reconnecting through redis-py) is channels_redis' own.
"""

from __future__ import annotations

import asyncio
import logging
from typing import Any

from channels_redis.pubsub import (
    RedisPubSubChannelLayer,
    RedisPubSubLoopLayer,
    RedisSingleShardConnection,
    _wrap_close,
)

logger = logging.getLogger(__name__)


class _Shard(RedisSingleShardConnection):
    def __init__(self, host: Any, channel_layer: Any) -> None:
        super().__init__(host, channel_layer)
        self._subscribed = asyncio.Event()

    async def subscribe(self, channel: str) -> None:
        await super().subscribe(channel)
        self._subscribed.set()

    async def _do_receiving(self) -> None:
        while True:
            try:
                if self._pubsub is not None and self._pubsub.subscribed:
                    # timeout=None: wait on the socket for as long as it takes.
                    message = await self._pubsub.get_message(
                        ignore_subscribe_messages=True, timeout=None
                    )
                    self._receive_message(message)
                else:
                    self._subscribed.clear()
                    await self._subscribed.wait()
            except (asyncio.CancelledError, GeneratorExit):
                raise
            except BaseException:  # noqa: BLE001 - Redis restarted: redis-py reconnects
                logger.exception("Reading the channel layer's subscriptions failed")
                await asyncio.sleep(1)


class _LoopLayer(RedisPubSubLoopLayer):
    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        shards: list[Any] = self._shards  # type: ignore[has-type]
        self._shards = [_Shard(shard.host, self) for shard in shards]


class PubSubChannelLayer(RedisPubSubChannelLayer):
    """RedisPubSubChannelLayer whose shards read Redis only when it sends something."""

    def _get_layer(self) -> Any:
        loop = asyncio.get_running_loop()
        layer = self._layers.get(loop)
        if layer is None:
            layer = _LoopLayer(*self._args, **self._kwargs, channel_layer=self)
            self._layers[loop] = layer
            _wrap_close(self, loop)
        return layer
