"""Settings of the streaming benchmark's Daphne: the studio's, with the channel layer
chosen by STUDIO_BENCH_LAYER ("core": channels_redis' RedisChannelLayer; "pubsub":
RedisPubSubChannelLayer, the studio's default), so both can be compared in one run."""

from __future__ import annotations

import os

from studio.settings import *  # noqa: F403
from studio.settings import REDIS_URL, redis_channel_layer

if REDIS_URL:
    CHANNEL_LAYERS = {
        "default": redis_channel_layer(
            REDIS_URL,
            kind=os.environ.get("STUDIO_BENCH_LAYER", "core"),
            prefix=os.environ.get("STUDIO_CHANNEL_PREFIX", "studio"),
        )
    }
