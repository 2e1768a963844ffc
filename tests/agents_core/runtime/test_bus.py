"""The event bus (agents_core/runtime/bus) on the real Redis and PostgreSQL: events stored by
sync code leave in one pipelined write; a subscription gets another process's events over
Redis, holds one that skips ahead until the missing ones are stored, and tells a client
that was sent a dead owner's unstored events to start over."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest
from channels.db import database_sync_to_async
from django.conf import settings

from agents_core.models import Thread
from agents_core.runtime import bus
from agents_core.runtime.bus import redis as bus_redis
from agents_core.runtime.bus.events import events_store
from tests.agents_core.runtime.test_stream_writer import OtherProcess, _on_redis
from tests.agents_core.runtime.test_websocket import communicator

pytestmark = pytest.mark.django_db(transaction=True)


class Sent:
    """What a subscription sent (its `send`), with a way to wait for more."""

    def __init__(self) -> None:
        self.texts: list[str] = []
        self.arrived = asyncio.Event()

    async def __call__(self, text: str) -> None:
        self.texts.append(text)
        self.arrived.set()

    async def wait_for(self, count: int) -> list[dict[str, Any]]:
        while len(self.texts) < count:
            self.arrived.clear()
            await asyncio.wait_for(self.arrived.wait(), 5)
        return [json.loads(text) for text in self.texts]


def _note(n: int, seq: int | None = None) -> dict[str, Any]:
    return {"type": "data-note", "n": n, **({"seq": seq} if seq is not None else {})}


async def _store(thread: Thread, *notes: int) -> list[tuple[int, str]]:
    events = [_note(n) for n in notes]
    texts = await database_sync_to_async(events_store)(
        thread_id=thread.pk, run_id=None, events=events
    )
    return [(event["seq"], text) for event, text in zip(events, texts, strict=True)]


async def test_events_stored_by_sync_code_are_published_to_other_processes_in_one_frame(
    make_thread, monkeypatch
):
    _on_redis(monkeypatch, settings.REDIS_URL)
    threads = [await database_sync_to_async(make_thread)() for _ in range(2)]
    other = OtherProcess()
    try:
        for thread in threads:
            await other.link.subscribe(bus_redis.channel(thread.pk))
        batches = [(thread.pk, await _store(thread, 1, 2)) for thread in threads]
        await database_sync_to_async(bus.publish_stored)(batches)
        for thread in threads:
            events = await other.events(thread.pk, 2)
            assert [(e["seq"], e["n"]) for e in events] == [(1, 1), (2, 2)]
        # Numbered after a dead owner: the frame says so (R), the receivers reset.
        again = await _store(threads[0], 3)
        await database_sync_to_async(bus.publish_stored)([(threads[0].pk, again)], True)
        for _ in range(100):
            if any(data[:1] == b"R" for _, data in other.frames):
                break
            await asyncio.sleep(0.02)
        assert (bus_redis.channel(threads[0].pk), b"R" + f"3 {again[0][1]}".encode()) in (
            other.frames
        )
    finally:
        other.link.close()


async def test_a_subscription_gets_another_processes_events_and_waits_for_a_gap_to_be_stored(
    make_thread, monkeypatch
):
    """Over Redis only (no owner, nothing told in this process): the next event is sent at
    once; one that skips ahead waits until its process says the missing ones are stored."""
    from studio.redis_link import Link

    _on_redis(monkeypatch, settings.REDIS_URL)
    thread = await database_sync_to_async(make_thread)()
    sent = Sent()
    subscription = await bus.subscribe(thread.pk, after=0, stored=0, send=sent)
    publisher = Link(settings.REDIS_URL, lambda *_: None)  # the run's process
    name = bus_redis.channel(thread.pk)
    counts: list[Any] = []
    try:
        first = json.dumps(_note(1, 1))
        publisher.publish([(name, bus_redis.events_frame([(1, first)]), True)], counts.append)
        assert [e["seq"] for e in await sent.wait_for(1)] == [1]
        assert counts == [[1]]  # this process received it, over Redis
        # Seq 3 before 2: held, nothing sent.
        third = json.dumps(_note(3, 3))
        publisher.publish([(name, bus_redis.events_frame([(3, third)]), False)], counts.append)
        await asyncio.sleep(0.2)
        assert len(sent.texts) == 1 and set(subscription.held) == {3}
        # The run's process stored 1..3 (here: the database numbers three notes).
        stored = await _store(thread, 10, 20, 30)
        publisher.publish([(name, bus_redis.stored_frame(3), False)], counts.append)
        events = await sent.wait_for(3)
        assert [(e["seq"], e["n"]) for e in events] == [(1, 1), (2, 20), (3, 30)]
        assert events[1:] == [json.loads(text) for _, text in stored[1:]]
        assert subscription.held == {}
        await asyncio.sleep(0.1)
        assert len(sent.texts) == 3  # each seq once
    finally:
        subscription.close()
        publisher.close()
    assert not bus_redis.following(thread.pk)  # its loop's last subscriber left


async def test_a_client_sent_a_dead_owners_unstored_events_is_told_to_start_over(make_thread):
    """A run's process published 1..2 and died before storing them; the events numbered
    after what is stored (reset) make the subscription reset, then send them."""
    from agents_core.runtime.bus import local

    thread = await database_sync_to_async(make_thread)()
    sent = Sent()
    subscription = await bus.subscribe(thread.pk, after=0, stored=0, send=sent)
    try:
        local.deliver(str(thread.pk), [(1, json.dumps(_note(1, 1))), (2, json.dumps(_note(2, 2)))])
        await sent.wait_for(2)
        stored = await _store(thread, 7)
        await database_sync_to_async(bus.publish_stored)([(thread.pk, stored)], True)
        events = await sent.wait_for(4)
        assert events[2:] == [{"type": "reset", "lastSeq": 0}, json.loads(stored[0][1])]
        # The same event again (another road) is not sent twice; a plain one with a
        # number already sent is not a reset.
        await database_sync_to_async(bus.publish_stored)([(thread.pk, stored)], True)
        local.deliver(str(thread.pk), stored)
        await asyncio.sleep(0.1)
        assert len(sent.texts) == 4
    finally:
        subscription.close()


async def test_a_socket_whose_after_is_not_a_number_replays_from_the_start(make_thread, owner):
    thread = await database_sync_to_async(make_thread)()
    stored = await _store(thread, 1, 2)
    for after in ("abc", "-3", "1.5"):
        comm = communicator(thread, owner, after=after)
        await comm.connect()
        assert [await comm.receive_json_from(timeout=5) for _ in stored] == [
            json.loads(text) for _, text in stored
        ]
        assert await comm.receive_nothing(timeout=0.2)
        await comm.disconnect()


async def test_a_socket_that_was_sent_more_than_is_stored_with_no_run_resets(make_thread, owner):
    """`after` beyond the thread's stored events, and no run streaming that could hold
    them: the client is told to start over from what is stored."""
    thread = await database_sync_to_async(make_thread)()
    await _store(thread, 1)
    comm = communicator(thread, owner, after=9)
    await comm.connect()
    assert await comm.receive_json_from(timeout=5) == {"type": "reset", "lastSeq": 1}
    assert await comm.receive_nothing(timeout=0.2)
    await comm.disconnect()
