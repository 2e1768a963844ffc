"""`GET /healthz`: whether this process reaches what it needs, for load balancers,
container health checks and orchestrators' probes.

It answers before Django (studio/asgi.py puts it in front of everything HTTP), so a probe
needs no session, no sign-in, no CSRF token, no HTTPS redirect and no Host from
ALLOWED_HOSTS (probes call a pod's or a container's own address). The body is small:

    {"database": "ok", "redis": "ok", "sandbox": "not configured"}

with 200 when every configured part answered and 503 when one did not. A part that is
not configured (the embedded studio has no Redis and no sandbox service) is reported as
"not configured" and does not fail it. Each check is one round trip (`SELECT 1`, `PING`,
the sandbox's `GET /health`), all three at once, each bounded by
STUDIO_HEALTH_TIMEOUT seconds. An error names its kind only ("error: OperationalError",
"error: timed out"): the full message, which may hold host names and addresses, goes to
the process's log.

`?parts=database,redis` checks only the parts named, and `?parts=` none: a probe asks for
what decides it. A web process stays in service while the sandbox is down (only Python
tools fail), and one whose database is away is not restarted for it, only taken out.
"""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import Awaitable, Callable
from typing import Any
from urllib.parse import parse_qs

from asgiref.sync import sync_to_async
from django.conf import settings

logger = logging.getLogger(__name__)

PATH = "/healthz"
OK = "ok"
NOT_CONFIGURED = "not configured"


class CheckFailed(Exception):
    """A part answered, but not that it is well (its own words, without addresses)."""


def _database_ping() -> None:
    from django.db import connection

    try:
        with connection.cursor() as cursor:
            cursor.execute("SELECT 1")
    finally:
        # Back to the pool: this executor thread may not serve a health check again.
        connection.close()


async def check_database() -> None:
    await sync_to_async(_database_ping, thread_sensitive=False)()


async def check_redis() -> None:
    import redis.asyncio

    timeout = settings.STUDIO_HEALTH_TIMEOUT
    client = redis.asyncio.Redis.from_url(
        settings.REDIS_URL, socket_connect_timeout=timeout, socket_timeout=timeout
    )
    try:
        await client.ping()
    finally:
        await client.aclose()


async def check_sandbox() -> None:
    import httpx

    url = settings.STUDIO_SANDBOX_URL.rstrip("/") + "/health"
    async with httpx.AsyncClient(timeout=settings.STUDIO_HEALTH_TIMEOUT) as client:
        response = await client.get(url)
    if response.status_code != 200:
        raise CheckFailed(f"HTTP {response.status_code}")
    if not response.json().get("ok"):
        raise CheckFailed("it refuses runs")


def configured_checks() -> dict[str, Callable[[], Awaitable[None]] | None]:
    """Every part by name, with its check or None when it is not configured."""
    return {
        "database": check_database,
        "redis": check_redis if settings.REDIS_URL else None,
        "sandbox": check_sandbox if settings.STUDIO_SANDBOX_URL else None,
    }


async def _outcome(name: str, check: Callable[[], Awaitable[None]] | None) -> str:
    if check is None:
        return NOT_CONFIGURED
    try:
        await asyncio.wait_for(check(), settings.STUDIO_HEALTH_TIMEOUT)
    except TimeoutError:
        logger.warning("health check: %s did not answer in time", name)
        return "error: timed out"
    except CheckFailed as exc:
        logger.warning("health check: %s: %s", name, exc)
        return f"error: {exc}"
    except Exception as exc:
        logger.warning("health check: %s failed: %r", name, exc)
        return f"error: {type(exc).__name__}"
    return OK


async def health(parts: list[str] | None = None) -> tuple[int, dict[str, str]]:
    """(status code, body) of a health check of `parts` (every part when None)."""
    checks = configured_checks()
    if parts is not None:
        unknown = sorted(set(parts) - set(checks))
        if unknown:
            return 400, {"detail": f"unknown part {unknown[0]!r}; parts: {', '.join(checks)}"}
        checks = {name: check for name, check in checks.items() if name in parts}
    outcomes = await asyncio.gather(*(_outcome(name, c) for name, c in checks.items()))
    body = dict(zip(checks, outcomes, strict=True))
    healthy = all(value in (OK, NOT_CONFIGURED) for value in body.values())
    return (200 if healthy else 503), body


class HealthCheck:
    """Wraps an ASGI app and answers GET and HEAD /healthz itself."""

    def __init__(self, app: Any) -> None:
        self.app = app

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] != "http" or scope["path"] != PATH:
            return await self.app(scope, receive, send)
        if scope["method"] not in ("GET", "HEAD"):
            return await _respond(send, 405, {"detail": "GET only"}, head=False)
        status, body = await health(_parts(scope))
        await _respond(send, status, body, head=scope["method"] == "HEAD")


def _parts(scope: dict[str, Any]) -> list[str] | None:
    query = parse_qs(scope.get("query_string", b"").decode("latin-1"), keep_blank_values=True)
    if "parts" not in query:
        return None
    return [name for value in query["parts"] for name in value.split(",") if name]


async def _respond(send: Any, status: int, body: dict[str, str], *, head: bool) -> None:
    payload = json.dumps(body).encode()
    headers = [
        (b"content-type", b"application/json"),
        (b"content-length", str(len(payload)).encode()),
        (b"cache-control", b"no-store"),
    ]
    if status == 405:
        headers.append((b"allow", b"GET, HEAD"))
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": b"" if head else payload})
