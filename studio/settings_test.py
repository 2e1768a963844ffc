"""Test settings: real PostgreSQL and Redis, fast hashers, in-memory email and layer.

The database is DATABASE_URL's server when it is set (CI, engineers sharing one server);
without it, the embedded PostgreSQL of the embedded studio, with its data in
.studio/test-pgdata, started by the test session (the processes the tests start inherit
the DATABASE_URL set here) and stopped when it ends. Tests that need the Redis channel
layer or a Celery worker ask for it with fixtures (tests/conftest.py). Give each
concurrent test run its own DATABASE_URL database and REDIS_URL db number so that runs
do not share rows or queues.
"""

from __future__ import annotations

import os
from pathlib import Path

if not os.environ.get("DATABASE_URL"):
    from studio.embedded_db import embedded_database_url

    os.environ["DATABASE_URL"] = embedded_database_url(
        Path(__file__).resolve().parent.parent / ".studio" / "test-pgdata", name="studio"
    )
os.environ.setdefault("REDIS_URL", "redis://127.0.0.1:6379/0")
# pytest-xdist's worker N (PYTEST_XDIST_WORKER=gwN) gets a Redis db of its own, two numbers
# up per worker (the release-boot test takes the number above its own), and a knowledge
# chunk folder of its own (below): queues, the channel layer, run streams and chunk tables
# of two workers never meet. pytest-django gives each worker its own test database
# (test_<name>_gwN). Workers inherit the controller's environment; the servers and workers
# a test starts inherit their worker's, already split (STUDIO_TEST_WORKER_SPLIT).
_worker = os.environ.get("PYTEST_XDIST_WORKER", "")
if _worker.startswith("gw") and os.environ.get("STUDIO_TEST_WORKER_SPLIT") != _worker:
    from urllib.parse import urlsplit, urlunsplit

    _redis = urlsplit(os.environ["REDIS_URL"])
    _number = (int(_redis.path.strip("/") or 0) + 2 * int(_worker[2:])) % 16
    os.environ["REDIS_URL"] = urlunsplit(_redis._replace(path=f"/{_number}"))
    os.environ.pop("STUDIO_KNOWLEDGE_URI", None)  # the controller's, without the worker
    os.environ["STUDIO_TEST_WORKER_SPLIT"] = _worker
os.environ.setdefault("SECRET_KEY", "test-only-secret-key-not-for-production")
# Two fixed Fernet keys: the first encrypts, both decrypt.
os.environ.setdefault(
    "STUDIO_ENCRYPTION_KEYS",
    "u7n3TqGx2YqXb4bqQWk8hJm2FJvOqkU5a6Zp0E3nL1Y=,x0cYkGqfR6h1wT5zv9mZk2nQ3bL7pA4sD8eJ1uV6yW0=",
)

# The knowledge chunk store of this test database, shared with the workers and servers
# the tests start (they inherit the variable).
os.environ.setdefault(
    "STUDIO_KNOWLEDGE_URI",
    str(
        Path(__file__).resolve().parent.parent
        / ".studio"
        / (
            "test-knowledge-"
            + os.environ["DATABASE_URL"].rstrip("/").rsplit("/", 1)[-1]
            + (f"_{_worker}" if _worker else "")
        )
    ),
)

# The test process keeps Python's garbage collector as it is; the servers and run workers
# the tests start get STUDIO_RUN_SETTLE_HEAP=1 (tests/conftest.py, child_process_env).
os.environ.setdefault("STUDIO_RUN_SETTLE_HEAP", "0")

# A larger connection pool than a server's: every async test runs on an event loop of its
# own, and a connection taken by a thread of a loop that is then closed (a consumer's or
# a tool's thread) is never given back to the pool. A server has one loop for its life.
os.environ.setdefault("STUDIO_DB_POOL_SIZE", "60")

from studio.settings import *  # noqa: E402,F403

PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
EMAIL_BACKEND = "django.core.mail.backends.locmem.EmailBackend"
CHANNEL_LAYERS = {
    "default": {
        "BACKEND": "channels.layers.InMemoryChannelLayer",
        "CONFIG": {"capacity": 5000, "expiry": 60},
    }
}
STUDIO_SERVE_STATIC = True

# Servers and workers that tests start as separate processes share events through Redis.
if os.environ.get("STUDIO_TEST_REDIS_LAYER") == "1":
    CHANNEL_LAYERS = {
        "default": redis_channel_layer(  # noqa: F405
            REDIS_URL,  # noqa: F405
            kind=STUDIO_CHANNEL_LAYER,  # noqa: F405
            prefix=os.environ.get("STUDIO_CHANNEL_PREFIX", "studio-test"),
        )
    }
