"""REST execute's fast path (tools_app/api/execute_fast.py) in front of the real Django
application, in-process over ASGI with the real database: what it answers itself, what
it leaves to Django (every refusal), and that both answer alike."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import pytest
from django.core.asgi import get_asgi_application
from rest_framework.authtoken.models import Token

from tests.tools_app.engine.conftest import synced_row
from tools_app import async_db, observers
from tools_app.api.execute_fast import FastExecute
from tools_app.demo import unit_convert
from tools_app.models import Tool, ToolRun
from traces.models import Span

pytestmark = pytest.mark.django_db(transaction=True)
INPUT = {"value": 3, "from": "km", "to": "mi"}
# Headers whose values differ from one response to the next.
VARYING = {"content-length"}


class Django:
    """The studio's Django ASGI app, counting the requests that reach it."""

    def __init__(self) -> None:
        self.app = get_asgi_application()
        self.calls = 0

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        self.calls += 1
        await self.app(scope, receive, send)


class Client:
    """ASGI requests on one event loop, to FastExecute(Django) or to Django alone."""

    def __init__(self) -> None:
        self.loop = asyncio.new_event_loop()
        self.django = Django()
        self.fast = FastExecute(self.django)

    def post(
        self,
        path: str,
        body: Any = None,
        *,
        key: str | None = None,
        raw: bytes | None = None,
        fast: bool = True,
        **headers: str,
    ) -> tuple[int, dict[str, str], Any]:
        sent = raw if raw is not None else json.dumps(body).encode()
        all_headers = {
            "host": "127.0.0.1",
            "content-type": "application/json",
            "content-length": str(len(sent)),
            **headers,
        }
        if key is not None:
            all_headers["authorization"] = f"Token {key}"
        path, _, query = path.partition("?")
        scope = {
            "type": "http",
            "asgi": {"version": "3.0"},
            "http_version": "1.1",
            "method": "POST",
            "scheme": "http",
            "path": path,
            "raw_path": path.encode(),
            "query_string": query.encode(),
            "root_path": "",
            "headers": [(k.encode(), v.encode()) for k, v in all_headers.items()],
            "client": ("127.0.0.1", 50000),
            "server": ("127.0.0.1", 8550),
        }
        app = self.fast if fast else self.django
        return self.loop.run_until_complete(_call(app, scope, sent))

    def close(self) -> None:
        self.loop.run_until_complete(async_db.close())
        self.loop.close()


async def _call(app: Any, scope: dict[str, Any], body: bytes) -> tuple[int, dict[str, str], Any]:
    messages = [{"type": "http.request", "body": body, "more_body": False}]
    sent: list[dict[str, Any]] = []

    async def receive() -> dict[str, Any]:
        if messages:
            return messages.pop(0)
        await asyncio.sleep(3600)  # the client stays connected
        return {"type": "http.disconnect"}

    async def send(message: dict[str, Any]) -> None:
        sent.append(message)

    await app(scope, receive, send)
    start = next(m for m in sent if m["type"] == "http.response.start")
    payload = b"".join(m.get("body", b"") for m in sent if m["type"] == "http.response.body")
    headers = {k.decode().lower(): v.decode() for k, v in start["headers"]}
    data = json.loads(payload) if headers.get("content-type") == "application/json" else payload
    return start["status"], headers, data


@pytest.fixture
def client() -> Iterator[Client]:
    made = Client()
    yield made
    made.close()


@pytest.fixture
def key(owner) -> str:
    synced_row(unit_convert)
    return Token.objects.create(user=owner).key


EXECUTE = "/api/tools/unit_convert/execute"
# What differs from one run to the next.
PER_RUN = {"id", "created_at", "started_at", "finished_at", "duration_ms"}


def _steady(body: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in body.items() if k not in PER_RUN}


def test_it_runs_the_tool_records_the_run_and_its_span_without_django(client, key, owner):
    status, _, body = client.post(EXECUTE, {"input": INPUT}, key=key)

    assert status == 200 and client.django.calls == 0
    assert body["status"] == "completed" and body["output"] == {"value": 1.864114, "unit": "mi"}
    run = ToolRun.objects.get(id=body["id"])
    assert run.created_by == owner and run.mode == "sync" and run.output == body["output"]
    assert run.tool.name == "unit_convert" and run.attempts == 1
    span = Span.objects.get(tool_run_id=run.id, kind="tool")
    assert span.name == "unit_convert" and span.attributes["outcome"] == "completed"


def test_its_answer_and_headers_are_the_ones_django_gives(client, key):
    fast_status, fast_headers, fast_body = client.post(EXECUTE, {"input": INPUT}, key=key)
    status, headers, body = client.post(EXECUTE, {"input": INPUT}, key=key, fast=False)

    assert client.django.calls == 1
    assert fast_status == status == 200, body
    assert set(fast_headers) == set(headers)
    assert {k: v for k, v in fast_headers.items() if k not in VARYING} == {
        k: v for k, v in headers.items() if k not in VARYING
    }
    assert _steady(fast_body) == _steady(body)
    assert set(fast_body) == set(body)


def test_an_input_the_schema_refuses_is_a_400_with_json_paths_and_a_failed_run(client, key):
    bad = {"input": {"value": "three", "from": "km", "to": "mi"}}

    status, _, body = client.post(EXECUTE, bad, key=key)
    django_status, _, django_body = client.post(EXECUTE, bad, key=key, fast=False)

    assert status == django_status == 400 and client.django.calls == 1
    assert body["code"] == "invalid_input" and body["errors"] == django_body["errors"]
    assert body["errors"][0]["path"] == "$.value"
    assert body["detail"] == django_body["detail"]
    assert ToolRun.objects.get(id=body["id"]).status == "failed"


def test_a_revoked_token_stops_working_at_once(client, key):
    assert client.post(EXECUTE, {"input": INPUT}, key=key)[0] == 200

    Token.objects.filter(key=key).delete()
    status, _, body = client.post(EXECUTE, {"input": INPUT}, key=key)

    assert status == 401 and client.django.calls == 1
    assert ToolRun.objects.count() == 1


def test_a_deactivated_users_token_stops_working_at_once(client, key, owner):
    assert client.post(EXECUTE, {"input": INPUT}, key=key)[0] == 200

    owner.is_active = False
    owner.save()
    status, _, _ = client.post(EXECUTE, {"input": INPUT}, key=key)

    assert status == 401 and ToolRun.objects.count() == 1


def test_a_bad_or_missing_token_gets_djangos_401_and_writes_nothing(client, key):
    assert client.post(EXECUTE, {"input": INPUT}, key="not-a-token")[0] == 401
    assert client.post(EXECUTE, {"input": INPUT})[0] == 401
    assert client.post(EXECUTE, {"input": INPUT}, authorization=f"Bearer {key}")[0] == 401

    assert client.django.calls == 3 and not ToolRun.objects.exists()


def test_another_users_tool_is_a_404_and_a_code_tool_or_ones_own_runs(
    client, make_tool, owner, outsider
):
    make_tool(name="owner_private", kind="http", owner=owner, config={"url": "http://x.invalid"})
    make_tool(name="owner_gone", kind="code", owner=owner)
    Tool.objects.filter(name="owner_gone").update(gone_at="2026-01-01T00:00:00Z")
    synced_row(unit_convert)
    outsider_key = Token.objects.create(user=outsider).key

    hidden = client.post("/api/tools/owner_private/execute", {"input": {}}, key=outsider_key)
    gone = client.post("/api/tools/owner_gone/execute", {"input": {}}, key=outsider_key)
    shared = client.post(EXECUTE, {"input": INPUT}, key=outsider_key)

    assert hidden[0] == gone[0] == 404 and hidden[2]["code"] == "not_found"
    assert shared[0] == 200 and client.django.calls == 2
    assert ToolRun.objects.count() == 1


@pytest.mark.parametrize(
    ("raw", "headers", "status"),
    [
        (b"{not json", {}, 400),
        (b'{"input_text": "{\\"value\\": 3}"}', {}, 400),  # the tool's schema refuses it
        (b'{"nothing": 1}', {}, 400),
        (b"[1, 2]", {}, 400),
        (b'{"input": ' + b"[" * 100 + b"]" * 100 + b"}", {}, 400),
        (b'{"input": {"value": 3}}', {"content-type": "text/plain"}, 415),
    ],
)
def test_a_body_it_does_not_take_gets_djangos_own_answer(client, key, raw, headers, status):
    answer = client.post(EXECUTE, raw=raw, key=key, **headers)
    expected = client.post(EXECUTE, raw=raw, key=key, fast=False, **headers)

    assert answer[0] == expected[0] == status
    assert _steady(answer[2]) == _steady(expected[2])
    assert client.django.calls == 2


def test_an_async_run_a_browsable_api_request_or_a_foreign_host_go_to_django(client, key):
    asynchronous = client.post(EXECUTE + "?mode=async", {"input": INPUT}, key=key)
    html = client.post(EXECUTE, {"input": INPUT}, key=key, accept="text/html")
    foreign = client.post(EXECUTE, {"input": INPUT}, key=key, host="evil.example")

    assert asynchronous[0] == 202 and asynchronous[2]["status"] == "pending"
    assert html[0] == 200 and html[1]["content-type"].startswith("text/html")
    assert foreign[0] == 400
    assert client.django.calls == 3


class RowlessObserver:
    def tool_run_finished(self, **facts: Any) -> None:
        pass


class FailingRowsObserver:
    def tool_run_finished(self, **facts: Any) -> None:
        pass

    def tool_run_rows(self, *, run_id: str, **facts: Any) -> list[Span]:
        # A name longer than its column: PostgreSQL refuses the span's INSERT.
        name = "x" * 300
        return [
            Span(span_id="f" * 16, trace_id=run_id, kind="tool", name=name, start=facts["start"])
        ]


@contextmanager
def observing(observer: Any) -> Iterator[None]:
    observers.register(observer)
    try:
        yield
    finally:
        observers.unregister(observer)


def test_an_observer_without_rows_leaves_the_run_to_django(client, key):
    with observing(RowlessObserver()):
        status, _, _ = client.post(EXECUTE, {"input": INPUT}, key=key)

    assert status == 200 and client.django.calls == 1


def test_an_observer_whose_rows_fail_does_not_lose_the_run(client, key):
    with observing(FailingRowsObserver()):
        status, _, body = client.post(EXECUTE, {"input": INPUT}, key=key)

    assert status == 200 and client.django.calls == 0
    run = ToolRun.objects.get(id=body["id"])
    assert not Span.objects.filter(trace_id=run.id).exists()


@pytest.mark.parametrize(("prepare", "threshold"), [(True, 0), (False, None)])
def test_its_connections_prepare_statements_unless_turned_off(
    client, key, settings, prepare, threshold
):
    settings.STUDIO_DB_PREPARE = prepare

    status, _, _ = client.post(EXECUTE, {"input": INPUT}, key=key)
    pool = client.loop.run_until_complete(async_db.pool())

    assert status == 200 and client.django.calls == 0
    assert pool.kwargs["prepare_threshold"] == threshold
