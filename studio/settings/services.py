"""Redis, the channel layer and Celery."""

from __future__ import annotations

import os

from django.core.exceptions import ImproperlyConfigured

from common.env import envint
from studio.settings.base import DATA_DIR, EMBEDDED, TIME_ZONE

# --- Redis, channel layer, Celery -------------------------------------------------------
REDIS_URL = os.environ.get("REDIS_URL") or ""

# The default capacity (100) silently drops events when a sender outruns a consumer.
CHANNEL_CAPACITY = envint("STUDIO_CHANNEL_CAPACITY", 5000)
# "pubsub" (default): channels_redis' RedisPubSubChannelLayer (studio/pubsub_layer.py: its
# reader waits on Redis instead of polling it ten times a second), which delivers with less
# latency than the list-based "core" layer when many streams run at once. Events are
# persisted with sequence numbers, so a message the pub/sub layer drops for a browser
# that was away is replayed from the database when it reconnects.
STUDIO_CHANNEL_LAYER = os.environ.get("STUDIO_CHANNEL_LAYER", "pubsub")


def redis_channel_layer(url: str, *, kind: str, prefix: str) -> dict:
    # redis-py reads with a 5 s socket timeout by default, the same as channels_redis'
    # blocking pop: an idle websocket would then fail with "Timeout reading".
    hosts = [{"address": url, "socket_timeout": 30}]
    if kind == "pubsub":
        return {
            "BACKEND": "studio.pubsub_layer.PubSubChannelLayer",
            "CONFIG": {"hosts": hosts, "prefix": prefix},
        }
    if kind == "core":
        return {
            "BACKEND": "channels_redis.core.RedisChannelLayer",
            "CONFIG": {
                "hosts": hosts,
                "capacity": CHANNEL_CAPACITY,
                "expiry": 60,
                "prefix": prefix,
            },
        }
    raise ImproperlyConfigured(f"STUDIO_CHANNEL_LAYER must be 'pubsub' or 'core', not {kind!r}")


if REDIS_URL:
    CHANNEL_LAYERS = {
        "default": redis_channel_layer(
            REDIS_URL,
            kind=STUDIO_CHANNEL_LAYER,
            prefix=os.environ.get("STUDIO_CHANNEL_PREFIX", "studio"),
        )
    }
else:
    CHANNEL_LAYERS = {
        "default": {
            "BACKEND": "channels.layers.InMemoryChannelLayer",
            "CONFIG": {"capacity": CHANNEL_CAPACITY, "expiry": 60},
        }
    }

CELERY_BROKER_URL = REDIS_URL or "memory://"
# Results of studio tasks live in the database rows they update; the backend only serves
# tasks that opt in (ignore_result=False), such as the health-check ping.
CELERY_RESULT_BACKEND = REDIS_URL or "cache+memory://"
CELERY_TASK_IGNORE_RESULT = True
CELERY_TASK_SERIALIZER = "json"
CELERY_RESULT_SERIALIZER = "json"
CELERY_ACCEPT_CONTENT = ["json"]
CELERY_TASK_ACKS_LATE = True
CELERY_TASK_REJECT_ON_WORKER_LOST = True
CELERY_WORKER_PREFETCH_MULTIPLIER = 1
CELERY_TASK_TIME_LIMIT = envint("CELERY_TASK_TIME_LIMIT", 15 * 60)
CELERY_TASK_SOFT_TIME_LIMIT = envint("CELERY_TASK_SOFT_TIME_LIMIT", 14 * 60)
CELERY_BROKER_CONNECTION_RETRY_ON_STARTUP = True
CELERY_BROKER_TRANSPORT_OPTIONS = {"visibility_timeout": envint("CELERY_VISIBILITY_TIMEOUT", 3600)}
CELERY_TIMEZONE = TIME_ZONE
CELERY_BEAT_SCHEDULE: dict = {}
CELERY_BEAT_SCHEDULE_FILENAME = str(DATA_DIR / "celerybeat-schedule")
# Async tool runs (tools_app/services/leases.py): the process executing a run holds a
# lease on it and renews it every third of STUDIO_TOOL_RUN_LEASE_SECONDS; every Celery
# worker, at start-up and every STUDIO_TOOL_RUN_RECOVER_SECONDS, puts a run whose lease
# expired (its process died) back in the queue, or fails it after
# STUDIO_TOOL_RUN_MAX_ATTEMPTS attempts. A dead worker's run is recovered within about
# lease + recover seconds without beat; beat's sweep below is a safety net.
STUDIO_TOOL_RUN_LEASE_SECONDS = envint("STUDIO_TOOL_RUN_LEASE_SECONDS", 15)
STUDIO_TOOL_RUN_RECOVER_SECONDS = envint("STUDIO_TOOL_RUN_RECOVER_SECONDS", 5)
STUDIO_TOOL_RUN_MAX_ATTEMPTS = envint("STUDIO_TOOL_RUN_MAX_ATTEMPTS", 3)
if (
    STUDIO_TOOL_RUN_LEASE_SECONDS < 2
    or STUDIO_TOOL_RUN_RECOVER_SECONDS < 1
    or STUDIO_TOOL_RUN_MAX_ATTEMPTS < 1
):
    raise ImproperlyConfigured(
        "STUDIO_TOOL_RUN_LEASE_SECONDS must be at least 2, STUDIO_TOOL_RUN_RECOVER_SECONDS "
        "and STUDIO_TOOL_RUN_MAX_ATTEMPTS at least 1."
    )
CELERY_BEAT_SCHEDULE["tool-runs-sweep"] = {"task": "tools_app.tool_runs_sweep", "schedule": 60.0}
# Agent-test suite runs whose worker died (evals/services/recovery.py): the workers sweep
# them as they sweep tool runs; beat's sweep is a safety net.
CELERY_BEAT_SCHEDULE["evals-suite-runs-sweep"] = {
    "task": "evals.suite_runs_sweep",
    "schedule": 60.0,
}
# Notification digests (agents_core.signals.digest): how often beat runs the job, how long
# a digested notification waits in the inbox, and how many failed deliveries mark it failed.
STUDIO_DIGEST_INTERVAL = envint("STUDIO_DIGEST_INTERVAL", 60)
STUDIO_DIGEST_DELAY = envint("STUDIO_DIGEST_DELAY", 0)
STUDIO_DIGEST_MAX_ATTEMPTS = envint("STUDIO_DIGEST_MAX_ATTEMPTS", 3)
CELERY_BEAT_SCHEDULE["notifications-digest"] = {
    "task": "agents_core.tasks.notifications_digest_run",
    "schedule": float(STUDIO_DIGEST_INTERVAL),
}
# Knowledge: requeue documents whose ingestion went silent (a worker that died).
CELERY_BEAT_SCHEDULE["knowledge-ingest-sweep"] = {
    "task": "knowledge.documents_sweep",
    "schedule": 60.0,
}
# In the embedded studio a worker thread runs inside the web process.
CELERY_EMBEDDED_WORKER = EMBEDDED and not REDIS_URL
