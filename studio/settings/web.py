"""What the HTTP side answers with: security headers, the REST API, limits on input."""

from __future__ import annotations

import os

from csp.constants import NONE, SELF
from django.core.exceptions import ImproperlyConfigured

from common.env import envbool, envfloat, envint

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

# GET /healthz (studio/health.py): how long each part (database, Redis, sandbox service)
# may take to answer before it is reported as failing, in seconds.
STUDIO_HEALTH_TIMEOUT = envfloat("STUDIO_HEALTH_TIMEOUT", 3.0)
if STUDIO_HEALTH_TIMEOUT <= 0:
    raise ImproperlyConfigured("STUDIO_HEALTH_TIMEOUT must be more than 0.")


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
        "common.permissions.WellFormedBody",
    ],
    # DRF's own two, the browsable API without its inline <style> (common/renderers.py).
    "DEFAULT_RENDERER_CLASSES": [
        "rest_framework.renderers.JSONRenderer",
        "common.renderers.BrowsableAPIRenderer",
    ],
    "DEFAULT_SCHEMA_CLASS": "drf_spectacular.openapi.AutoSchema",
    "EXCEPTION_HANDLER": "common.exception_handler.exception_handler",
    # JSON only (the source imports add file uploads themselves), under the limits below.
    "DEFAULT_PARSER_CLASSES": ["common.parsers.StudioJSONParser"],
    "DEFAULT_PAGINATION_CLASS": "rest_framework.pagination.LimitOffsetPagination",
    "PAGE_SIZE": 100,
}
# --- Limits on input (common/json_input.py, common/body_limit.py) --------------------------
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
# The largest websocket message Daphne reads (or sends), in bytes: what the `serve` and
# `runstudio` commands give Daphne. A frame between STUDIO_MAX_BODY_BYTES and this gets the
# `too_large` error event on an open socket; a larger one is closed by Daphne with 1009.
STUDIO_WEBSOCKET_MAX_MESSAGE_BYTES = envint(
    "STUDIO_WEBSOCKET_MAX_MESSAGE_BYTES", 2 * STUDIO_MAX_BODY_BYTES
)
if STUDIO_WEBSOCKET_MAX_MESSAGE_BYTES < STUDIO_MAX_BODY_BYTES:
    raise ImproperlyConfigured(
        "STUDIO_WEBSOCKET_MAX_MESSAGE_BYTES must be at least STUDIO_MAX_BODY_BYTES "
        f"({STUDIO_MAX_BODY_BYTES}): a frame under the limit must reach the studio."
    )
# An agent import (POST /api/agents/import) of this many agents and tools or more runs as
# a Celery job (202 with the job's URL, progress readable there); smaller ones in the
# request (agents_core/services/import_jobs.py).
STUDIO_IMPORT_ASYNC_ITEMS = envint("STUDIO_IMPORT_ASYNC_ITEMS", 500)

SPECTACULAR_SETTINGS = {
    "TITLE": "Agent Studio API",
    "DESCRIPTION": "Build, test and chat with LLM agents.",
    "VERSION": "0.2.0",  # the package version (pyproject.toml)
    "SERVE_INCLUDE_SCHEMA": False,
    "SERVE_PERMISSIONS": ["rest_framework.permissions.IsAuthenticated"],
    # Swagger UI's files come from drf-spectacular-sidecar, not a CDN (no network needed).
    "SWAGGER_UI_DIST": "SIDECAR",
    "SWAGGER_UI_FAVICON_HREF": "SIDECAR",
    "REDOC_DIST": "SIDECAR",
    # `check --deploy` checks the deployment's settings; the schema's own warnings (names
    # of components, views it cannot describe) are the API docs' quality, not a
    # deployment's, and would make every deployment's check fail alike.
    "ENABLE_DJANGO_DEPLOY_CHECK": False,
}
