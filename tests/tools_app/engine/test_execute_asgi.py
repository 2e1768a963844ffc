"""REST execute through the studio's ASGI application in-process (studio/asgi.py: the
body limit, Django's async handler, every middleware on the event loop, the async view):
what a client gets, what is recorded, every refusal, and the headers the middleware add."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from typing import Any

import pytest
from asgiref.sync import iscoroutinefunction
from django.urls import resolve
from rest_framework.authtoken.models import Token

from studio import middleware as studio_middleware
from studio.asgi import application
from tests.tools_app.engine.conftest import synced_row
from tools_app import observers
from tools_app.demo import unit_convert
from tools_app.models import Tool, ToolRun
from traces.models import Span

pytestmark = pytest.mark.django_db(transaction=True)
INPUT = {"value": 3, "from": "km", "to": "mi"}
EXECUTE = "/api/tools/unit_convert/execute"
# What differs from one run to the next.
PER_RUN = {"id", "created_at", "started_at", "finished_at", "duration_ms"}


class Client:
    """ASGI requests to the studio's application on one event loop."""

    def __init__(self) -> None:
        self.loop = asyncio.new_event_loop()

    def post(
        self,
        path: str,
        body: Any = None,
        *,
        key: str | None = None,
        raw: bytes | None = None,
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
        return self.loop.run_until_complete(_call(scope, sent))

    def close(self) -> None:
        self.loop.close()


async def _call(scope: dict[str, Any], body: bytes) -> tuple[int, dict[str, str], Any]:
    messages = [{"type": "http.request", "body": body, "more_body": False}]
    sent: list[dict[str, Any]] = []

    async def receive() -> dict[str, Any]:
        if messages:
            return messages.pop(0)
        await asyncio.sleep(3600)  # the client stays connected
        return {"type": "http.disconnect"}

    async def send(message: dict[str, Any]) -> None:
        sent.append(message)

    await application(scope, receive, send)
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


def test_the_route_is_an_async_view():
    assert iscoroutinefunction(resolve(EXECUTE).func)


def test_it_runs_the_tool_and_records_the_run_and_its_span(client, key, owner):
    status, _, body = client.post(EXECUTE, {"input": INPUT}, key=key)

    assert status == 200
    assert body["status"] == "completed" and body["output"] == {"value": 1.864114, "unit": "mi"}
    run = ToolRun.objects.get(id=body["id"])
    assert run.created_by == owner and run.mode == "sync" and run.output == body["output"]
    assert run.tool.name == "unit_convert" and run.attempts == 1
    span = Span.objects.get(tool_run_id=run.id, kind="tool")
    assert span.name == "unit_convert" and span.attributes["outcome"] == "completed"


def test_its_answer_carries_the_middlewares_and_drfs_headers(client, key):
    status, headers, _ = client.post(EXECUTE, {"input": INPUT}, key=key)

    assert status == 200 and headers["content-type"] == "application/json"
    assert headers["x-content-type-options"] == "nosniff"
    assert headers["x-frame-options"] == "DENY"
    assert headers["referrer-policy"] == "same-origin"
    assert headers["cross-origin-opener-policy"] == "same-origin"
    assert "default-src" in headers["content-security-policy"]
    assert headers["vary"] == "Accept" and headers["allow"] == "POST, OPTIONS"


def test_an_api_request_crosses_to_a_thread_in_no_middleware(client, key, monkeypatch):
    def no_thread(*args: Any, **kwargs: Any) -> Any:
        raise AssertionError("a middleware crossed to a thread for an API request")

    monkeypatch.setattr(studio_middleware, "sync_to_async", no_thread)

    assert client.post(EXECUTE, {"input": INPUT}, key=key)[0] == 200
    assert client.post(EXECUTE, {"input": INPUT})[0] == 401


def test_an_input_the_schema_refuses_is_a_400_with_json_paths_and_a_failed_run(client, key):
    bad = {"input": {"value": "three", "from": "km", "to": "mi"}}

    status, _, body = client.post(EXECUTE, bad, key=key)

    assert status == 400 and body["code"] == "invalid_input"
    assert body["errors"][0]["path"] == "$.value" and body["detail"]
    assert ToolRun.objects.get(id=body["id"]).status == "failed"


def test_a_revoked_token_stops_working_at_once(client, key):
    assert client.post(EXECUTE, {"input": INPUT}, key=key)[0] == 200

    Token.objects.filter(key=key).delete()
    status, headers, body = client.post(EXECUTE, {"input": INPUT}, key=key)

    assert status == 401 and headers["www-authenticate"] == "Token"
    assert body["detail"] == "Invalid token."
    assert ToolRun.objects.count() == 1


def test_a_deactivated_users_token_stops_working_at_once(client, key, owner):
    assert client.post(EXECUTE, {"input": INPUT}, key=key)[0] == 200

    owner.is_active = False
    owner.save()
    status, _, _ = client.post(EXECUTE, {"input": INPUT}, key=key)

    assert status == 401 and ToolRun.objects.count() == 1


def test_a_bad_or_missing_token_gets_a_401_and_writes_nothing(client, key):
    assert client.post(EXECUTE, {"input": INPUT}, key="not-a-token")[0] == 401
    assert client.post(EXECUTE, {"input": INPUT})[0] == 401
    assert client.post(EXECUTE, {"input": INPUT}, authorization=f"Bearer {key}")[0] == 401

    assert not ToolRun.objects.exists()


def test_a_session_post_without_its_csrf_token_is_refused(client, key, owner):
    from django.contrib.sessions.backends.db import SessionStore

    session = SessionStore()
    session["_auth_user_id"] = str(owner.pk)
    session["_auth_user_backend"] = "django.contrib.auth.backends.ModelBackend"
    session["_auth_user_hash"] = owner.get_session_auth_hash()
    session.create()

    status, _, body = client.post(
        EXECUTE, {"input": INPUT}, cookie=f"sessionid={session.session_key}"
    )

    assert status == 403 and "CSRF" in body["detail"]
    assert not ToolRun.objects.exists()


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
    assert shared[0] == 200
    assert ToolRun.objects.count() == 1


@pytest.mark.parametrize(
    ("raw", "headers", "status", "field"),
    [
        (b"{not json", {}, 400, "detail"),
        (b'{"input_text": "{\\"value\\": 3}"}', {}, 400, "errors"),  # the schema refuses it
        (b'{"input_text": 5}', {}, 400, "input_text"),
        (b'{"nothing": 1}', {}, 400, "input"),
        (b"[1, 2]", {}, 400, "errors"),
        (b'{"input": ' + b"[" * 100 + b"]" * 100 + b"}", {}, 400, "detail"),
        (b'{"input": {"value": 3}}', {"content-type": "text/plain"}, 415, "detail"),
    ],
)
def test_a_body_it_does_not_take_gets_a_json_error(client, key, raw, headers, status, field):
    answer = client.post(EXECUTE, raw=raw, key=key, **headers)

    assert answer[0] == status and field in answer[2]
    assert answer[1]["content-type"] == "application/json"


def test_a_body_over_the_limit_is_a_413_before_django_reads_it(client, key, settings):
    settings.STUDIO_MAX_BODY_BYTES = 1000
    big = json.dumps({"input": {"value": 3, "from": "km", "to": "mi", "pad": "x" * 2000}})

    status, _, body = client.post(EXECUTE, raw=big.encode(), key=key)

    assert status == 413 and body["code"] == "body_too_large"
    assert not ToolRun.objects.exists()


def test_an_async_run_a_browsable_api_request_and_a_foreign_host(client, key):
    asynchronous = client.post(EXECUTE + "?mode=async", {"input": INPUT}, key=key)
    html = client.post(EXECUTE, {"input": INPUT}, key=key, accept="text/html")
    foreign = client.post(EXECUTE, {"input": INPUT}, key=key, host="evil.example")
    bad_mode = client.post(EXECUTE + "?mode=later", {"input": INPUT}, key=key)

    assert asynchronous[0] == 202 and asynchronous[2]["status"] == "pending"
    assert html[0] == 200 and html[1]["content-type"].startswith("text/html")
    assert foreign[0] == 400
    assert bad_mode[0] == 400 and bad_mode[2]["code"] == "invalid_mode"


class FailingObserver:
    def tool_run_finished(self, **facts: Any) -> None:
        raise RuntimeError("the observer breaks")


class FailingWriteObserver:
    def tool_run_finished(self, *, run_id: str, start: Any, **facts: Any) -> None:
        # A name longer than its column: PostgreSQL refuses the INSERT, which breaks the
        # run's transaction (the observer has no savepoint of its own).
        span = Span(span_id="f" * 16, trace_id=run_id, kind="tool", name="x" * 300, start=start)
        span.save(force_insert=True)


@pytest.mark.parametrize("observer", [FailingObserver(), FailingWriteObserver()])
def test_an_observer_that_fails_does_not_lose_the_run(client, key, observer):
    observers.register(observer)
    try:
        status, _, body = client.post(EXECUTE, {"input": INPUT}, key=key)
    finally:
        observers.unregister(observer)

    assert status == 200 and ToolRun.objects.get(id=body["id"]).status == "completed"
    spans = Span.objects.filter(trace_id=body["id"])
    if isinstance(observer, FailingWriteObserver):
        assert not spans.exists()  # the transaction with the spans was rolled back
    else:
        assert spans.get().kind == "tool"  # the console's span, written beside it


@pytest.mark.django_db(transaction=False)
def test_inside_a_callers_transaction_a_failing_observer_loses_no_run(owner):
    from tools_app.services.execute import tool_execute

    tool = synced_row(unit_convert)
    observer = FailingWriteObserver()
    observers.register(observer)
    try:
        run = tool_execute(tool=tool, input=INPUT, user=owner)
    finally:
        observers.unregister(observer)

    assert ToolRun.objects.get(id=run.id).status == "completed"
    assert not Span.objects.filter(trace_id=run.id).exists()
