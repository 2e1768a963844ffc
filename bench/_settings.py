"""Settings of the streaming benchmark's Daphne: the studio's, with the Redis layer's
socket timeout above channels_redis' 5 s blocking pop (redis-py 8 defaults to 5 s, so an
idle websocket's receive loop fails with "Timeout reading" after 5 s otherwise)."""

from __future__ import annotations

from studio.settings import *  # noqa: F403
from studio.settings import CHANNEL_LAYERS, REDIS_URL

if REDIS_URL:
    CHANNEL_LAYERS["default"]["CONFIG"]["hosts"] = [
        {"address": REDIS_URL, "socket_timeout": 30}
    ]
