"""What every stand-in API shares: the credentials it accepts and the request recorder."""

from __future__ import annotations

import base64
import json
from typing import Any

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.routing import Route

EMAIL, API_TOKEN = "ann@example.com", "atlassian-token-1"
SN_USER, SN_PASSWORD = "itil.ann", "sn-password-1"
BEARER = "access-token-1"
GOOGLE_KEY, CX = "google-key-1", "engine-1"


async def record(request: Request) -> dict[str, Any]:
    body = await request.body()
    entry = {
        "method": request.method,
        "path": request.url.path,
        "query": dict(request.query_params),
        "raw_query": request.url.query,
        "headers": dict(request.headers),
        "json": json.loads(body) if body else None,
    }
    request.app.state.requests.append(entry)
    return entry


def app_recording(routes: list[Route]) -> Starlette:
    app = Starlette(routes=routes)
    app.state.requests = []
    return app


def basic_ok(request: Request, user: str, password: str) -> bool:
    expected = "Basic " + base64.b64encode(f"{user}:{password}".encode()).decode()
    return request.headers.get("authorization") == expected


def bearer_ok(request: Request) -> bool:
    return request.headers.get("authorization") == f"Bearer {BEARER}"
