"""Settings of the streaming benchmark's Daphne: the studio's, with the channel layer
chosen by STUDIO_BENCH_LAYER ("core": channels_redis' RedisChannelLayer, as
studio/settings.py configures it; "pubsub": RedisPubSubChannelLayer), and the Redis socket
timeout above channels_redis' 5 s blocking pop (redis-py 8 defaults to 5 s, so an idle
websocket's receive loop otherwise fails with "Timeout reading" after 5 s)."""

from __future__ import annotations

import os

from studio.settings import *  # noqa: F403
from studio.settings import CHANNEL_LAYERS, REDIS_URL

if REDIS_URL:
    CHANNEL_LAYERS["default"]["CONFIG"]["hosts"] = [
        {"address": REDIS_URL, "socket_timeout": 30}
    ]
    if os.environ.get("STUDIO_BENCH_LAYER") == "pubsub":
        CHANNEL_LAYERS["default"] = {
            "BACKEND": "channels_redis.pubsub.RedisPubSubChannelLayer",
            "CONFIG": {"hosts": [{"address": REDIS_URL, "socket_timeout": 30}],
                       "prefix": os.environ.get("STUDIO_CHANNEL_PREFIX", "studio")},
        }
