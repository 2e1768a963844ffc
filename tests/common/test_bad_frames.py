"""Every websocket of the studio against a list of bad frames: each gets an error event
(`{"type": "error", "code", "message", "path"?}`), the socket stays open, nothing is
written. A handler that fails unexpectedly also answers with an error event."""

from __future__ import annotations

import logging

import pytest
from channels.db import database_sync_to_async
from channels.routing import URLRouter
from channels.testing import WebsocketCommunicator

from agents_core.models import Thread
from knowledge.services.bases import kb_create
from knowledge.store import get_store
from studio.routing import websocket_urlpatterns
from tests.agents_core.factories import AgentFactory
from tests.studio.db_state import db_fingerprint

pytestmark = pytest.mark.django_db(transaction=True)

DEEP = 100_000
BIG = 8 * 1024 * 1024 + 1

# (frame: text or bytes, expected code, expected path or None). Frames that every socket
# refuses, whatever it takes.
ANY_SOCKET = [
    (b"\x00\x01binary", "not_text", None),
    ("not json", "invalid_json", "$"),
    ('{"type": "chat", "text": }', "invalid_json", "$"),
    ("[1, 2]", "not_an_object", "$"),
    ('"chat"', "not_an_object", "$"),
    ("null", "not_an_object", "$"),
    ("{}", "unknown_type", "$.type"),
    ('{"type": 5}', "unknown_type", "$.type"),
    ('{"type": "no-such-thing"}', "unknown_type", "$.type"),
    ('{"type": "chat", "deep": ' + "[" * DEEP + "]" * DEEP + "}", "too_deep", None),
    ('{"type": "chat", "deep": ' + '{"a": ' * DEEP + "1" + "}" * DEEP + "}", "too_deep", None),
    ('{"type": "chat", "text": "a\\u0000b"}', "nul_character", "$.text"),
    ('{"type": "chat", "a\\u0000": 1}', "nul_character", '$["a\\u0000"]'),
    ('{"type": "chat", "text": "' + "x" * 1_000_001 + '"}', "string_too_long", "$.text"),
    ('{"type": "chat", "text": "hi", "n": 1e999}', "number_out_of_range", "$.n"),
    ('{"type": "chat", "text": "hi", "n": NaN}', "invalid_json", "$"),
    ('{"type": "chat", "text": "' + "x" * BIG + '"}', "too_large", None),
]
# Frames of the thread socket's own types with fields of the wrong type.
THREAD_SOCKET = [
    ('{"type": "chat"}', "invalid", "$.text"),
    ('{"type": "chat", "text": true}', "invalid", "$.text"),
    ('{"type": "chat", "text": ""}', "invalid", "$.text"),
    ('{"type": "chat", "text": ["a"]}', "invalid", "$.text"),
    ('{"type": "chat", "text": "hi", "options": "fast"}', "invalid", "$.options"),
    ('{"type": "resume", "payload": {}}', "invalid", "$.toolCallId"),
    ('{"type": "resume", "toolCallId": [], "payload": {}}', "invalid", "$.toolCallId"),
    ('{"type": "resume", "toolCallId": "' + "c" * 101 + '"}', "invalid", "$.toolCallId"),
    ('{"type": "client-tool-result", "toolCallId": {}}', "invalid", "$.toolCallId"),
    ('{"type": "client-tool-result", "toolCallId": "c", "error": {"a": 1}}', "invalid", "$.error"),
    ('{"type": "get-partial", "toolCallId": null}', "invalid", "$.toolCallId"),
    ('{"type": "get-partial"}', "invalid", "$.toolCallId"),
    # Well-formed but not serviceable: the service's own refusal, as an error event.
    ('{"type": "resume", "toolCallId": "nope", "payload": {}}', "not_found", None),
    ('{"type": "abort"}', "not_running", None),
]


def _id(frame: str | bytes) -> str:
    text = frame if isinstance(frame, str) else repr(frame)
    return text[:40] + (f"...({len(text)})" if len(text) > 40 else "")


@pytest.fixture
def thread(owner):
    agent = AgentFactory(slug="frames", owner=owner)
    return Thread.objects.create(agent=agent, owner=owner, resource_id=str(owner.pk))


async def _connect(path: str, user) -> WebsocketCommunicator:
    comm = WebsocketCommunicator(URLRouter(websocket_urlpatterns), path)
    comm.scope["user"] = user
    connected, _ = await comm.connect()
    assert connected
    return comm


async def _send(comm: WebsocketCommunicator, frame: str | bytes) -> None:
    if isinstance(frame, bytes):
        await comm.send_to(bytes_data=frame)
    else:
        await comm.send_to(text_data=frame)


async def _refused(comm: WebsocketCommunicator, frame: str | bytes, code: str, path) -> dict:
    before = await database_sync_to_async(db_fingerprint)()
    await _send(comm, frame)
    event = await comm.receive_json_from(timeout=10)
    where = _id(frame)
    assert event["type"] == "error", (where, event)
    assert event["code"] == code, (where, event)
    assert event["message"], where
    if path is not None:
        assert event["path"] == path, (where, event)
        assert event["errors"][0]["path"] == path, where
    assert await database_sync_to_async(db_fingerprint)() == before, where
    return event


# One socket per test takes every bad frame in turn: each is answered, and the socket is
# still open for the next. (One socket also keeps the database connections the consumer's
# threads take to a few: each test has its own event loop, whose threads end with it.)
async def test_every_bad_frame_on_the_thread_socket_gets_an_error_and_the_socket_stays_open(
    thread, owner
):
    comm = await _connect(f"/ws/threads/{thread.pk}/", owner)

    for frame, code, path in ANY_SOCKET + THREAD_SOCKET:
        await _refused(comm, frame, code, path)

    await comm.send_json_to({"type": "get-partial", "toolCallId": "none"})
    answer = await comm.receive_json_from(timeout=10)
    assert answer["type"] == "partial" and answer["toolCallId"] == "none"
    await comm.disconnect()


async def test_every_bad_frame_on_the_tool_runs_socket_gets_an_error_and_the_socket_stays_open(
    owner,
):
    comm = await _connect("/ws/tool-runs/", owner)

    for frame, code, path in ANY_SOCKET:
        await _refused(comm, frame, code, path)
    # It takes no messages at all, and says so on every one without closing.
    event = await _refused(comm, '{"type": "chat", "text": "hi"}', "unknown_type", "$.type")
    assert "none" in event["message"]
    await comm.disconnect()


async def test_every_bad_frame_on_the_knowledge_socket_gets_an_error_and_the_socket_stays_open(
    owner,
):
    kb = await database_sync_to_async(kb_create)(
        owner=owner, name="Frames", slug="frames", embedding_model=""
    )
    comm = await _connect(f"/ws/knowledge/{kb.slug}/", owner)
    assert (await comm.receive_json_from(timeout=10))["type"] == "progress"

    for frame, code, path in ANY_SOCKET:
        await _refused(comm, frame, code, path)
    await _refused(comm, '{"type": "progress"}', "unknown_type", "$.type")
    await comm.disconnect()
    await database_sync_to_async(get_store().drop)(table=kb.table_name)


async def test_a_handler_that_fails_answers_with_an_error_event_and_logs_it(
    thread, owner, monkeypatch, caplog
):
    from agents_core.services import threads as thread_services

    def broken(**kwargs):
        raise RuntimeError("a bug in the handler")

    comm = await _connect(f"/ws/threads/{thread.pk}/", owner)
    monkeypatch.setattr(thread_services, "thread_partial", broken)

    with caplog.at_level(logging.ERROR, logger="common.websocket"):
        await comm.send_json_to({"type": "get-partial", "toolCallId": "c1"})
        event = await comm.receive_json_from(timeout=10)

    assert event == {
        "type": "error",
        "code": "internal",
        "message": "The server failed to handle this message (the error was logged).",
        "request": "get-partial",
    }
    assert any(r.exc_info and "a bug in the handler" in str(r.exc_info[1]) for r in caplog.records)
    monkeypatch.undo()
    await comm.send_json_to({"type": "get-partial", "toolCallId": "c1"})
    assert (await comm.receive_json_from(timeout=10))["type"] == "partial"
    await comm.disconnect()
