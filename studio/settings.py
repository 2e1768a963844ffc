"""Agent Studio settings: one env-driven file with safe defaults.

Two ways to run (DESIGN.md section 3):
- embedded (STUDIO_EMBEDDED=1, what `make run` sets): SQLite file, in-memory channel
  layer, Celery with an in-process broker, offline model; a local secret is generated;
- services: DATABASE_URL (PostgreSQL), REDIS_URL (Celery broker and channels_redis);
  SECRET_KEY and STUDIO_ENCRYPTION_KEYS must be given.
"""

from __future__ import annotations

import os
from pathlib import Path

import dj_database_url
from django.core.exceptions import ImproperlyConfigured

from studio.env import envbool, envint, envlist, envsecret, local_secret

# litellm must never fetch its price map from the network (it is imported lazily).
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

BASE_DIR = Path(__file__).resolve().parent.parent
EMBEDDED = envbool("STUDIO_EMBEDDED", False)
DATA_DIR = Path(os.environ.get("STUDIO_DATA_DIR") or BASE_DIR / ".studio")

DEBUG = envbool("DEBUG", EMBEDDED)

SECRET_KEY = envsecret("SECRET_KEY") or ""
if not SECRET_KEY:
    if not EMBEDDED:
        raise ImproperlyConfigured(
            "SECRET_KEY is not set. Set SECRET_KEY (or SECRET_KEY_FILE), "
            "or run the embedded studio with STUDIO_EMBEDDED=1 (make run)."
        )
    SECRET_KEY = local_secret(DATA_DIR / "secret_key")

# Keys for credentials at rest, apart from SECRET_KEY: comma-separated Fernet keys, the
# first one encrypts, all of them decrypt (rotation: put the new key first).
_encryption_keys = envsecret("STUDIO_ENCRYPTION_KEYS") or ""
if not _encryption_keys and EMBEDDED:
    from cryptography.fernet import Fernet

    _path = DATA_DIR / "encryption_key"
    if not _path.exists():
        _path.parent.mkdir(parents=True, exist_ok=True)
        _path.write_text(Fernet.generate_key().decode())
        _path.chmod(0o600)
    _encryption_keys = _path.read_text().strip()
STUDIO_ENCRYPTION_KEYS = [k.strip() for k in _encryption_keys.split(",") if k.strip()]

ALLOWED_HOSTS = envlist("ALLOWED_HOSTS", ["127.0.0.1", "localhost", "[::1]"])
CSRF_TRUSTED_ORIGINS = envlist("CSRF_TRUSTED_ORIGINS", [])

INSTALLED_APPS = [
    "daphne",
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.staticfiles",
    "rest_framework",
    "rest_framework.authtoken",
    "drf_spectacular",
    "drf_spectacular_sidecar",
    "channels",
    "agents_core",
    "tools_app",
    "frontend",
]

MIDDLEWARE = [
    "django.middleware.security.SecurityMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    "frontend.middleware.LoginRequiredEverywhereMiddleware",
]

ROOT_URLCONF = "studio.urls"
ASGI_APPLICATION = "studio.asgi.application"
WSGI_APPLICATION = None

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
            ],
        },
    },
]

DATABASE_URL = os.environ.get("DATABASE_URL") or f"sqlite:///{DATA_DIR / 'db.sqlite3'}"
DATABASES = {"default": dj_database_url.parse(DATABASE_URL, conn_max_age=0)}
if DATABASES["default"]["ENGINE"] == "django.db.backends.postgresql" and envbool(
    "STUDIO_DB_POOL", True
):
    # Under ASGI Django's persistent connections are to stay off: a pool instead (psycopg's,
    # Django's `pool` option). Without it every call from a websocket consumer connected
    # afresh (Channels closes the connection after each), and 100 chats starting together
    # waited seconds for their runs (bench.streaming's message-to-run-start time).
    # Threads that keep a connection (the runtime's database threads) hold one of the pool.
    DATABASES["default"].setdefault("OPTIONS", {})["pool"] = {
        "min_size": 1,
        "max_size": envint("STUDIO_DB_POOL_SIZE", 20),
        "timeout": 15,
    }
if DATABASES["default"]["ENGINE"] == "django.db.backends.sqlite3":
    # The embedded studio writes from the web thread and the worker thread at once.
    DATABASES["default"].setdefault("OPTIONS", {})["timeout"] = 20
    DATA_DIR.mkdir(parents=True, exist_ok=True)
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.UserAttributeSimilarityValidator"},
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
]
LOGIN_URL = "login"
LOGIN_REDIRECT_URL = "frontend:home"
LOGOUT_REDIRECT_URL = "login"

LANGUAGE_CODE = "en-us"
TIME_ZONE = "UTC"
USE_I18N = True
USE_TZ = True

STATIC_URL = "/static/"
STATIC_ROOT = Path(os.environ.get("STATIC_ROOT") or DATA_DIR / "static")
# Daphne serves /static/ itself (through Django's ASGI static handler) unless a front
# proxy does it.
STUDIO_SERVE_STATIC = envbool("STUDIO_SERVE_STATIC", True)

SESSION_COOKIE_HTTPONLY = True
SESSION_COOKIE_SECURE = envbool("SESSION_COOKIE_SECURE", False)
CSRF_COOKIE_SECURE = envbool("CSRF_COOKIE_SECURE", False)
X_FRAME_OPTIONS = "DENY"

# --- Redis, channel layer, Celery -------------------------------------------------------
REDIS_URL = os.environ.get("REDIS_URL") or ""

# The default capacity (100) silently drops events when a sender outruns a consumer.
CHANNEL_CAPACITY = envint("STUDIO_CHANNEL_CAPACITY", 5000)
# "pubsub" (default): channels_redis' RedisPubSubChannelLayer, measured 5-40x lower latency
# than the list-based "core" layer under many streams (bench/streaming.py). Events are
# persisted with sequence numbers, so a message the pub/sub layer drops for a browser
# that was away is replayed from the database when it reconnects.
STUDIO_CHANNEL_LAYER = os.environ.get("STUDIO_CHANNEL_LAYER", "pubsub")


def redis_channel_layer(url: str, *, kind: str, prefix: str) -> dict:
    # redis-py reads with a 5 s socket timeout by default, the same as channels_redis'
    # blocking pop: an idle websocket would then fail with "Timeout reading".
    hosts = [{"address": url, "socket_timeout": 30}]
    if kind == "pubsub":
        return {
            "BACKEND": "channels_redis.pubsub.RedisPubSubChannelLayer",
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
CELERY_BEAT_SCHEDULE["tool-runs-sweep"] = {"task": "tools_app.tool_runs_sweep", "schedule": 60.0}
# Notification digests (agents_core.signals.digest): how often beat runs the job, how long
# a digested notification waits in the inbox, and how many failed deliveries mark it failed.
STUDIO_DIGEST_INTERVAL = envint("STUDIO_DIGEST_INTERVAL", 60)
STUDIO_DIGEST_DELAY = envint("STUDIO_DIGEST_DELAY", 0)
STUDIO_DIGEST_MAX_ATTEMPTS = envint("STUDIO_DIGEST_MAX_ATTEMPTS", 3)
CELERY_BEAT_SCHEDULE["notifications-digest"] = {
    "task": "agents_core.tasks.notifications_digest_run",
    "schedule": float(STUDIO_DIGEST_INTERVAL),
}
# In the embedded studio a worker thread runs inside the web process.
CELERY_EMBEDDED_WORKER = EMBEDDED and not REDIS_URL

# --- REST API -----------------------------------------------------------------------------
REST_FRAMEWORK = {
    "DEFAULT_AUTHENTICATION_CLASSES": [
        # Token first so that an anonymous API call gets 401 with WWW-Authenticate.
        "rest_framework.authentication.TokenAuthentication",
        "rest_framework.authentication.SessionAuthentication",
    ],
    # Signed in first; then a write's body must parse, even where the view reads none.
    "DEFAULT_PERMISSION_CLASSES": [
        "rest_framework.permissions.IsAuthenticated",
        "studio.permissions.WellFormedBody",
    ],
    "DEFAULT_SCHEMA_CLASS": "drf_spectacular.openapi.AutoSchema",
    "EXCEPTION_HANDLER": "studio.exception_handler.exception_handler",
    # JSON only (the source imports add file uploads themselves), under the limits below.
    "DEFAULT_PARSER_CLASSES": ["studio.parsers.StudioJSONParser"],
    "DEFAULT_PAGINATION_CLASS": "rest_framework.pagination.LimitOffsetPagination",
    "PAGE_SIZE": 100,
}
# --- Limits on input (studio/json_input.py, studio/body_limit.py) --------------------------
# The largest request body and websocket frame, in bytes. Larger bodies get 413 (JSON)
# before anything reads them; OpenAPI specs (up to 5 MB as text) must fit.
STUDIO_MAX_BODY_BYTES = envint("STUDIO_MAX_BODY_BYTES", 8 * 1024 * 1024)
DATA_UPLOAD_MAX_MEMORY_SIZE = STUDIO_MAX_BODY_BYTES
# How deep JSON from outside may nest ({"a": [1]} is 2 levels): deeper bodies, frames and
# JSON form fields are refused before a parser or a validator recurses into them.
STUDIO_MAX_JSON_DEPTH = envint("STUDIO_MAX_JSON_DEPTH", 64)
# The longest string (or key) of a JSON body or frame, in characters; the field that
# carries an OpenAPI spec as text is exempt.
STUDIO_MAX_STRING_CHARS = envint("STUDIO_MAX_STRING_CHARS", 256 * 1024)

SPECTACULAR_SETTINGS = {
    "TITLE": "Agent Studio API",
    "DESCRIPTION": "Build, test and chat with LLM agents.",
    "VERSION": "0.1.0",
    "SERVE_INCLUDE_SCHEMA": False,
    "SERVE_PERMISSIONS": ["rest_framework.permissions.IsAuthenticated"],
    # Swagger UI's files come from drf-spectacular-sidecar, not a CDN (no network needed).
    "SWAGGER_UI_DIST": "SIDECAR",
    "SWAGGER_UI_FAVICON_HREF": "SIDECAR",
    "REDOC_DIST": "SIDECAR",
}

# --- Models -------------------------------------------------------------------------------
# The model demo agents use. With no provider key configured it is the offline provider.
STUDIO_OFFLINE_MODEL = "studio/scripted"
STUDIO_DEFAULT_MODEL = os.environ.get("STUDIO_DEFAULT_MODEL") or STUDIO_OFFLINE_MODEL
STUDIO_LOAD_DEMO = envbool("STUDIO_LOAD_DEMO", True)
STUDIO_CODE_MODULES = envlist("STUDIO_CODE_MODULES", [])

# --- Runs ---------------------------------------------------------------------------------
# Where runs execute: "inline" (default) in the web process that starts them; "worker" in
# run worker processes (`manage.py execute_runs`), so a web process only relays events.
# Workers need a shared database and channel layer (PostgreSQL and Redis).
STUDIO_RUN_EXECUTOR = os.environ.get("STUDIO_RUN_EXECUTOR", "inline")
if STUDIO_RUN_EXECUTOR not in ("inline", "worker"):
    raise ImproperlyConfigured(
        f"STUDIO_RUN_EXECUTOR must be 'inline' or 'worker', not {STUDIO_RUN_EXECUTOR!r}"
    )
STUDIO_RUN_WORKER_CONCURRENCY = envint("STUDIO_RUN_WORKER_CONCURRENCY", 200)
# Runs a worker claims at a time: with a burst of queued runs the workers take turns.
STUDIO_RUN_WORKER_CLAIM_BATCH = envint("STUDIO_RUN_WORKER_CLAIM_BATCH", 4)
# How often a run worker beats and looks for queued runs it was not woken for.
STUDIO_RUN_WORKER_POLL_SECONDS = float(os.environ.get("STUDIO_RUN_WORKER_POLL_SECONDS", "2"))
# A run worker whose heartbeat is older than this (at least three polls) is dead: the
# others end its runs.
STUDIO_RUN_WORKER_DEAD_SECONDS = envint("STUDIO_RUN_WORKER_DEAD_SECONDS", 30)
# Threads a run worker lends litellm for its end-of-stream work (runtime/worker.py).
STUDIO_RUN_WORKER_HELPER_THREADS = envint("STUDIO_RUN_WORKER_HELPER_THREADS", 2)
# Threads that run the runtime's database work in a web process, and in a run worker,
# whose event loop (every stream) gets the GIL back every STUDIO_RUN_WORKER_SWITCH_INTERVAL
# seconds at most (runtime/worker.py).
STUDIO_RUNTIME_DB_THREADS = envint("STUDIO_RUNTIME_DB_THREADS", 4)
STUDIO_RUN_WORKER_DB_THREADS = envint("STUDIO_RUN_WORKER_DB_THREADS", 2)
STUDIO_RUN_WORKER_SWITCH_INTERVAL = float(
    os.environ.get("STUDIO_RUN_WORKER_SWITCH_INTERVAL", "0.001")
)
# A process that executes runs (a run worker; a web process with the inline executor, once
# litellm is loaded) freezes what it imported and then collects garbage with these
# thresholds (gc.set_threshold; agents_core/runtime/heap.py). STUDIO_RUN_SETTLE_HEAP=0 leaves
# the collector as Python sets it (the test settings do, for the test process itself).
STUDIO_RUN_SETTLE_HEAP = envbool("STUDIO_RUN_SETTLE_HEAP", True)
STUDIO_RUN_GC_THRESHOLDS = tuple(
    int(n) for n in envlist("STUDIO_RUN_GC_THRESHOLDS", ["50000", "20", "100"])
)
# Stream deltas are coalesced and written at most this often (milliseconds); a delta that
# finds the writer idle goes at once (agents_core/runtime/events.py, StreamWriter). 60, not
# 30: at one chat of 30 deltas a second, 30 wrote each delta alone and the studio's CPU per
# delta was 1.1-1.3x litellm's for the same chunks; 60 writes two at a time, 0.6-0.95x, for
# about 30 ms more latency (bench.streaming; README, "Benchmarks").
STUDIO_STREAM_BATCH_MS = envint("STUDIO_STREAM_BATCH_MS", 60)

# --- Tools --------------------------------------------------------------------------------
# Test-only: lets web_fetch and outbound tool calls reach servers on 127.0.0.1.
STUDIO_ALLOW_LOOPBACK_FETCH = False
STUDIO_PYTHON_EXECUTABLE = os.environ.get("STUDIO_PYTHON_EXECUTABLE", "/usr/bin/python3")
STUDIO_SANDBOX_URL = os.environ.get("STUDIO_SANDBOX_URL", "")

LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "handlers": {"console": {"class": "logging.StreamHandler"}},
    "root": {"handlers": ["console"], "level": os.environ.get("LOG_LEVEL", "INFO")},
    "loggers": {
        "LiteLLM": {"level": "WARNING"},
        "httpx": {"level": "WARNING"},
        "daphne": {"level": "WARNING"},
    },
}
