"""The thread websocket: who may connect, replay from a sequence number, live events,
client messages (chat, get-partial, errors)."""

from __future__ import annotations

import json

import pytest
from channels.db import database_sync_to_async
from channels.routing import URLRouter
from channels.testing import WebsocketCommunicator
from django.contrib.auth.models import AnonymousUser

from tests.agents_core.runtime.conftest import events_of, run_to_end, settle

pytestmark = pytest.mark.django_db(transaction=True)


def communicator(thread, user, after=None):
    from studio.routing import websocket_urlpatterns

    path = f"/ws/threads/{thread.pk}/" + (f"?after={after}" if after is not None else "")
    comm = WebsocketCommunicator(URLRouter(websocket_urlpatterns), path)
    comm.scope["user"] = user
    return comm


async def receive_until(comm, predicate, limit=500):
    received = []
    for _ in range(limit):
        event = await comm.receive_json_from(timeout=20)
        received.append(event)
        if predicate(event):
            return received
    raise AssertionError(f"never saw the awaited event in {received[-5:]}")


async def test_an_anonymous_socket_is_closed_with_4401(make_thread):
    thread = await database_sync_to_async(make_thread)()
    comm = communicator(thread, AnonymousUser())
    connected, _ = await comm.connect()
    assert connected
    assert (await comm.receive_output(timeout=5)) == {"type": "websocket.close", "code": 4401}
    await comm.disconnect()


async def test_an_outsider_socket_is_closed_with_4403(make_thread, outsider):
    thread = await database_sync_to_async(make_thread)()
    comm = communicator(thread, outsider)
    await comm.connect()
    assert (await comm.receive_output(timeout=5)) == {"type": "websocket.close", "code": 4403}
    await comm.disconnect()


async def test_the_owner_chats_and_sees_the_run_live(make_thread, owner):
    thread = await database_sync_to_async(make_thread)()
    comm = communicator(thread, owner)
    connected, _ = await comm.connect()
    assert connected
    await comm.send_json_to({"type": "chat", "text": "use weather_lookup for London"})
    events = await receive_until(comm, lambda e: e["type"] == "run-finish")
    seqs = [e["seq"] for e in events]
    assert seqs == list(range(1, len(events) + 1))
    assert any(e["type"] == "tool-result" and e["output"]["city"] == "London" for e in events)
    await settle()
    await comm.disconnect()


async def test_a_reconnect_from_sequence_n_receives_exactly_the_missed_events(make_thread, owner):
    thread = await database_sync_to_async(make_thread)()
    await run_to_end(thread, "use weather_lookup for Tokyo", owner)
    stored = await database_sync_to_async(events_of)(thread)
    n = len(stored) // 2
    comm = communicator(thread, owner, after=stored[n - 1]["seq"])
    await comm.connect()
    replayed = [await comm.receive_json_from(timeout=10) for _ in range(len(stored) - n)]
    assert replayed == stored[n:]
    assert await comm.receive_nothing(timeout=0.3)
    # The next run arrives live, without repeating anything.
    await comm.send_json_to({"type": "chat", "text": "use weather_lookup for Sydney"})
    live = await receive_until(comm, lambda e: e["type"] == "run-finish")
    assert live[0]["seq"] == stored[-1]["seq"] + 1 and live[0]["type"] == "run-start"
    await settle()
    await comm.disconnect()


async def test_a_chat_while_a_run_streams_is_refused_with_an_error(make_thread, owner, settings):
    settings.STUDIO_OFFLINE_DELAY = 0.05
    thread = await database_sync_to_async(make_thread)()
    comm = communicator(thread, owner)
    await comm.connect()
    await comm.send_json_to({"type": "chat", "text": "use weather_lookup for Paris"})
    await receive_until(comm, lambda e: e["type"] == "run-start")
    await comm.send_json_to({"type": "chat", "text": "and again"})
    errors = await receive_until(comm, lambda e: e["type"] == "error")
    assert errors[-1]["code"] == "run_running"
    await receive_until(comm, lambda e: e["type"] == "run-finish")
    await settle()
    await comm.disconnect()


async def test_a_live_message_that_skips_ahead_is_preceded_by_the_missed_events(make_thread, owner):
    """Another writer's events published out of order: the socket fetches the stored ones
    it missed first, then sends the live one as it was encoded, and never one twice."""
    from agents_core.runtime import bus
    from agents_core.runtime.bus.events import events_store

    thread = await database_sync_to_async(make_thread)()
    await run_to_end(thread, "use weather_lookup for Oslo", owner)
    last = (await database_sync_to_async(events_of)(thread))[-1]["seq"]
    comm = communicator(thread, owner, after=last)
    await comm.connect()
    assert await comm.receive_nothing(timeout=0.3)

    events = [{"type": "data-note", "n": n} for n in range(3)]
    texts = await database_sync_to_async(events_store)(
        thread_id=thread.pk, run_id=None, events=events
    )
    message = [(thread.pk, [(events[2]["seq"], texts[2])])]
    await database_sync_to_async(bus.publish_stored)(message)
    await database_sync_to_async(bus.publish_stored)(message)
    received = [await comm.receive_from(timeout=10) for _ in range(3)]
    assert received[2] == texts[2]  # the live one, sent as it was encoded
    assert [json.loads(text)["seq"] for text in received] == [last + 1, last + 2, last + 3]
    assert [json.loads(text)["n"] for text in received] == [0, 1, 2]
    assert await comm.receive_nothing(timeout=0.3)
    await comm.disconnect()
