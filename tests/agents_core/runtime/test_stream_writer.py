"""The process's stream writer: the events of many runs are stored in one transaction and
published per thread, in order, and one run's failure stays that run's."""

from __future__ import annotations

import asyncio
import json
import socket
import uuid
from typing import Any

import pytest
from channels.db import database_sync_to_async
from django.conf import settings

from agents_core.models import Run, StreamEvent, Thread
from agents_core.runtime.bus import local
from agents_core.runtime.bus import redis as bus_redis
from agents_core.runtime.bus.events import EventSink

pytestmark = pytest.mark.django_db(transaction=True)


def _threads_and_runs(make_thread, count: int) -> list[tuple[Thread, Run]]:
    result = []
    for _ in range(count):
        thread = make_thread()
        result.append(
            (thread, Run.objects.create(thread=thread, agent=thread.agent, status="completed"))
        )
    return result


def _stored(thread: Thread) -> list[tuple[int, str, dict]]:
    return [
        (e.seq, e.type, e.payload)
        for e in StreamEvent.objects.filter(thread=thread).order_by("seq")
    ]


class Collector:
    """A subscriber of this process on the bus (as a subscription is: runtime/bus)."""

    def __init__(self) -> None:
        self.loop = asyncio.get_running_loop()
        self.items: list[tuple[int, str]] = []

    def live_events(self, items: list[tuple[int, str]], reset: bool = False) -> None:
        self.items.extend(items)

    def live_stored(self, seq: int) -> None:
        pass


async def test_the_events_of_many_runs_are_delivered_at_once_and_stored_in_one_batch(
    make_thread,
):
    pairs = await database_sync_to_async(_threads_and_runs)(make_thread, 5)
    # A window longer than the test: what is stored is what the flush below asked for.
    sinks = [EventSink(thread_id=thread.pk, run_id=run.pk, interval=60) for thread, run in pairs]
    collector = Collector()
    local.subscribe(pairs[2][0].pk, collector)
    writer = sinks[0].writer
    assert all(sink.writer is writer for sink in sinks)
    before = writer.batches
    try:
        for number, sink in enumerate(sinks):
            await sink.emit("run-start", resumed=False)
            sink.delta(sink.base("text-delta", textDelta=f"hello {number}"))
            await asyncio.sleep(0)  # the loop's pass ends: the delta goes out
            if number == 2:
                # Delivered when its pass ends, numbered, not joined to a later pass's delta.
                assert [json.loads(text)["textDelta"] for _, text in collector.items[1:]] == [
                    "hello 2"
                ]
            sink.delta(sink.base("text-delta", textDelta=" and more"))
            await sink.emit("step-finish", step=1)
        await asyncio.gather(*(sink.flush() for sink in sinks))
    finally:
        local.unsubscribe(pairs[2][0].pk, collector)
    # Five runs, one write: the writer took them all together.
    assert writer.batches - before == 1
    for number, (thread, _) in enumerate(pairs):
        rows = await database_sync_to_async(_stored)(thread)
        assert [(seq, kind) for seq, kind, _ in rows] == [
            (1, "run-start"),
            (2, "text-delta"),
            (3, "text-delta"),
            (4, "step-finish"),
        ]
        assert [rows[1][2]["textDelta"], rows[2][2]["textDelta"]] == [
            f"hello {number}",
            " and more",
        ]
        refreshed = await database_sync_to_async(Thread.objects.get)(pk=thread.pk)
        assert refreshed.last_seq == 4
    # What the subscriber got is what was stored, in order.
    stored = [payload for _, _, payload in await database_sync_to_async(_stored)(pairs[2][0])]
    assert [json.loads(text) for _, text in collector.items] == stored
    assert [seq for seq, _ in collector.items] == [1, 2, 3, 4]
    # A later event continues each thread's numbering.
    await sinks[0].emit("run-finish", status="completed")
    await sinks[0].release()
    rows = await database_sync_to_async(_stored)(pairs[0][0])
    assert [seq for seq, _, _ in rows] == [1, 2, 3, 4, 5]


async def test_a_run_whose_thread_is_gone_fails_alone(make_thread):
    pairs = await database_sync_to_async(_threads_and_runs)(make_thread, 3)
    sinks = [EventSink(thread_id=thread.pk, run_id=run.pk, interval=0.05) for thread, run in pairs]
    doomed = pairs[1][0]
    await database_sync_to_async(doomed.delete)()

    results = await asyncio.gather(
        *(sink.emit("run-start", resumed=False) for sink in sinks), return_exceptions=True
    )
    assert isinstance(results[1], Exception)
    assert not isinstance(results[0], Exception) and not isinstance(results[2], Exception)
    for sink in sinks[::2]:
        await sink.flush()
    for index in (0, 2):
        rows = await database_sync_to_async(_stored)(pairs[index][0])
        assert [(seq, kind) for seq, kind, _ in rows] == [(1, "run-start")]
    assert sinks[0].published == sinks[2].published == 1 and sinks[1].published == 0
    # The failure was reported once; the surviving sinks keep working.
    await sinks[2].emit("run-finish", status="completed")
    await sinks[2].flush()
    assert [seq for seq, _, _ in await database_sync_to_async(_stored)(pairs[2][0])] == [1, 2]


async def test_a_thread_deleted_mid_run_fails_that_run_at_its_next_emit(make_thread):
    pairs = await database_sync_to_async(_threads_and_runs)(make_thread, 2)
    sinks = [EventSink(thread_id=thread.pk, run_id=run.pk, interval=0.05) for thread, run in pairs]
    for sink in sinks:
        await sink.emit("run-start", resumed=False)
        await sink.flush()
    await database_sync_to_async(pairs[0][0].delete)()
    for sink in sinks:
        sink.delta(sink.base("text-delta", textDelta="x"))
    await sinks[1].flush()
    with pytest.raises(Exception, match="thread_id|foreign key|violates"):
        await sinks[0].flush()
    assert [seq for seq, _, _ in await database_sync_to_async(_stored)(pairs[1][0])] == [1, 2]


async def test_deltas_alone_are_stored_after_the_interval_without_an_emit(make_thread):
    [(thread, run)] = await database_sync_to_async(_threads_and_runs)(make_thread, 1)
    sink = EventSink(thread_id=thread.pk, run_id=run.pk, interval=0.01)
    await sink.emit("run-start", resumed=False)
    sink.delta(sink.base("text-delta", textDelta="streamed"))
    for _ in range(500):
        if sink.stored == 2:
            break
        await asyncio.sleep(0.01)
    rows = await database_sync_to_async(_stored)(thread)
    assert [(seq, kind) for seq, kind, _ in rows] == [(1, "run-start"), (2, "text-delta")]
    assert sink.tail == []  # nothing left that is not stored


def test_a_batch_of_several_threads_is_numbered_after_each_threads_last_seq(make_thread):
    """One statement numbers every thread's events from its own `last_seq`, in order, and
    returns them as stored (what subscribers are sent)."""
    from agents_core.runtime.storage.event_store_sql import events_store_many

    pairs = _threads_and_runs(make_thread, 2)
    Thread.objects.filter(pk=pairs[1][0].pk).update(last_seq=7)
    batches = [
        (
            thread.pk,
            run.pk,
            [{"type": "text-delta", "textDelta": f"t{n}"}, {"type": "step-finish", "step": 1}],
        )
        for n, (thread, run) in enumerate(pairs)
    ]
    texts = events_store_many(batches)
    assert [[json.loads(text) for text in encoded] for encoded in texts] == [
        [payload for _, _, payload in _stored(thread)] for thread, _ in pairs
    ]
    stored = [
        (
            Thread.objects.get(pk=thread.pk).last_seq,
            [
                (seq, kind, {k: v for k, v in payload.items() if k != "runId"})
                for seq, kind, payload in _stored(thread)
            ],
        )
        for thread, _ in pairs
    ]
    assert stored == [
        (
            2,
            [
                (1, "text-delta", {"type": "text-delta", "textDelta": "t0", "seq": 1}),
                (2, "step-finish", {"type": "step-finish", "step": 1, "seq": 2}),
            ],
        ),
        (
            9,
            [
                (8, "text-delta", {"type": "text-delta", "textDelta": "t1", "seq": 8}),
                (9, "step-finish", {"type": "step-finish", "step": 1, "seq": 9}),
            ],
        ),
    ]


def test_a_batch_naming_a_deleted_thread_is_refused_whole(make_thread):
    from agents_core.runtime.storage.event_store_sql import events_store_many

    (kept, kept_run), (gone, _) = _threads_and_runs(make_thread, 2)
    gone_pk = gone.pk
    gone.delete()
    with pytest.raises(Thread.DoesNotExist):
        events_store_many(
            [
                (kept.pk, kept_run.pk, [{"type": "text-delta", "textDelta": "a"}]),
                (gone_pk, None, [{"type": "text-delta", "textDelta": "b"}]),
            ]
        )
    assert _stored(kept) == []
    assert Thread.objects.get(pk=kept.pk).last_seq == 0


def _pubsub_layer(url: str) -> Any:
    from channels_redis.pubsub import RedisPubSubChannelLayer

    return RedisPubSubChannelLayer(hosts=[url], prefix=f"test-writer-{uuid.uuid4().hex[:8]}")


class OtherProcess:
    """What another process's bus gets: its own connections to Redis."""

    def __init__(self) -> None:
        from studio.redis_link import Link

        self.frames: list[tuple[bytes, bytes]] = []
        self.arrived = asyncio.Event()
        self.link = Link(settings.REDIS_URL, self.received)

    def received(self, channel: bytes, data: bytes) -> None:
        self.frames.append((channel, data))
        self.arrived.set()

    async def events(self, thread_id: Any, count: int) -> list[dict]:
        name = bus_redis.channel(str(thread_id))
        while True:
            found = [
                json.loads(line.partition(" ")[2])
                for channel, data in self.frames
                if channel == name and data[:1] == b"E"
                for line in data[1:].decode().split("\n")
            ]
            if len(found) >= count:
                return found
            self.arrived.clear()
            await asyncio.wait_for(self.arrived.wait(), 5)


def _on_redis(monkeypatch, url: str) -> None:
    """This process's channel layer is the pub/sub one at `url` (the bus follows it)."""
    layer = _pubsub_layer(url)
    monkeypatch.setattr("channels.layers.get_channel_layer", lambda *args: layer)
    monkeypatch.setattr(bus_redis.Publisher, "_by_loop", {})
    monkeypatch.setattr(bus_redis, "_links", {})


async def test_with_redis_the_events_of_one_loop_pass_leave_in_one_write_in_order(
    make_thread, monkeypatch
):
    """Another process's bus gets each thread's events in order; what the sinks sent in
    one pass of the loop leaves in one write (one message per thread), from the loop."""
    from studio.redis_link import Link

    _on_redis(monkeypatch, settings.REDIS_URL)
    writes: list[int] = []
    original = Link.publish

    def counting(self: Any, messages: list, counted: Any) -> None:
        writes.append(len(messages))
        original(self, messages, counted)

    monkeypatch.setattr(Link, "publish", counting)
    pairs = await database_sync_to_async(_threads_and_runs)(make_thread, 2)
    other = OtherProcess()
    try:
        for thread, _ in pairs:
            await other.link.subscribe(bus_redis.channel(str(thread.pk)))
        sinks = [
            EventSink(thread_id=thread.pk, run_id=run.pk, interval=60) for thread, run in pairs
        ]
        for sink in sinks:
            await sink.emit("run-start", resumed=False)
        await asyncio.sleep(0.05)
        before = len(writes)
        for number, sink in enumerate(sinks):
            sink.delta(sink.base("text-delta", textDelta=f"run {number}"))
            sink.delta(sink.base("text-delta", textDelta="!"))
            sink.delta(sink.base("tool-input-start", toolCallId="c1", toolName="t"))
        for number, (thread, _) in enumerate(pairs):
            events = await other.events(thread.pk, 3)
            assert [(e["seq"], e["type"]) for e in events] == [
                (1, "run-start"),
                (2, "text-delta"),
                (3, "tool-input-start"),
            ]
            # The two deltas of one pass went out as one event.
            assert events[1]["textDelta"] == f"run {number}!"
        # Six events of two threads, sent in one pass: one write of two messages.
        assert writes[before:] == [2]
        assert [sink.published for sink in sinks] == [3, 3]
        assert [sink.stored for sink in sinks] == [0, 0]  # delivered before being stored
        for sink in sinks:
            await sink.release()
        # The store's progress follows: a socket that waits for a gap replays then.
        await asyncio.sleep(0.1)
        assert (bus_redis.channel(str(pairs[0][0].pk)), b"S3") in other.frames
    finally:
        other.link.close()


async def test_when_redis_is_down_the_events_are_stored_and_the_run_goes_on(
    make_thread, monkeypatch
):
    """Subscribers of other processes miss the live events (they replay them once
    reconnected); this process's subscribers and the store do not."""
    with socket.socket() as sock:  # a port nothing listens on
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    _on_redis(monkeypatch, f"redis://127.0.0.1:{port}/0")
    [(thread, run)] = await database_sync_to_async(_threads_and_runs)(make_thread, 1)
    collector = Collector()
    local.subscribe(thread.pk, collector)
    try:
        sink = EventSink(thread_id=thread.pk, run_id=run.pk, interval=0.01)
        await sink.emit("run-start", resumed=False)
        sink.delta(sink.base("text-delta", textDelta="still here"))
        await sink.release()
    finally:
        local.unsubscribe(thread.pk, collector)
    assert [(seq, kind) for seq, kind, _ in await database_sync_to_async(_stored)(thread)] == [
        (1, "run-start"),
        (2, "text-delta"),
    ]
    assert [seq for seq, _ in collector.items] == [1, 2]


def test_writers_of_the_same_threads_at_once_number_every_event_exactly_once(make_thread):
    """Batches of one thread (one statement, no transaction) and of several (locked in id
    order first) written by many connections at once: each thread's events are numbered
    1..n with no gap or repeat, and each stored payload carries its row's number."""
    from concurrent.futures import ThreadPoolExecutor

    from django.db import connection

    from agents_core.runtime.storage.event_store_sql import events_store_many

    pairs = _threads_and_runs(make_thread, 3)
    ids = [str(thread.pk) for thread, _ in pairs]

    def write(number: int) -> None:
        try:
            for round_ in range(10):
                chosen = ids[:1] if number % 2 else ids[number % 3 :] + ids[: number % 3]
                events_store_many(
                    [
                        (
                            thread_id,
                            None,
                            [
                                {"type": "text-delta", "textDelta": f"w{number}r{round_}e{k}"}
                                for k in range(1 + number % 3)
                            ],
                        )
                        for thread_id in chosen
                    ]
                )
        finally:
            connection.close()

    with ThreadPoolExecutor(max_workers=6) as pool:
        list(pool.map(write, range(6)))
    for thread, _ in pairs:
        rows = _stored(thread)
        assert [seq for seq, _, _ in rows] == list(range(1, len(rows) + 1))
        assert all(payload["seq"] == seq for seq, _, payload in rows)
        assert Thread.objects.get(pk=thread.pk).last_seq == len(rows)
    # Writers 1, 3 and 5 wrote 2, 1 and 3 events ten times to the first thread alone; 0, 2
    # and 4 wrote 1, 3 and 2 events ten times to every thread.
    assert len(_stored(pairs[0][0])) == 10 * (2 + 1 + 3) + 10 * (1 + 3 + 2)
    assert len(_stored(pairs[1][0])) == 10 * (1 + 3 + 2)


def test_events_stored_in_a_transaction_that_rolls_back_are_not_kept(make_thread):
    from django.db import transaction

    from agents_core.runtime.bus.events import events_store

    [(thread, run)] = _threads_and_runs(make_thread, 1)
    events_store(
        thread_id=thread.pk, run_id=run.pk, events=[{"type": "text-delta", "textDelta": "kept"}]
    )
    with pytest.raises(RuntimeError), transaction.atomic():
        events_store(
            thread_id=thread.pk, run_id=run.pk, events=[{"type": "text-delta", "textDelta": "gone"}]
        )
        raise RuntimeError("the caller fails after storing")
    assert [(seq, payload["textDelta"]) for seq, _, payload in _stored(thread)] == [(1, "kept")]
    assert Thread.objects.get(pk=thread.pk).last_seq == 1


def test_a_nul_character_which_jsonb_refuses_is_stored_and_sent_as_a_replacement(make_thread):
    """PostgreSQL's jsonb cannot hold U+0000; a model that emits one must not fail the run."""
    from agents_core.runtime.bus.events import events_store

    [(thread, run)] = _threads_and_runs(make_thread, 1)
    texts = events_store(
        thread_id=thread.pk,
        run_id=run.pk,
        events=[
            {"type": "text-delta", "textDelta": "fine"},
            {"type": "text-delta", "textDelta": "bad \x00 byte", "note": "a \\u0000 stays"},
        ],
    )
    stored = _stored(thread)
    assert [payload["textDelta"] for _, _, payload in stored] == ["fine", "bad \ufffd byte"]
    assert stored[1][2]["note"] == "a \\u0000 stays"  # the text, not a NUL
    assert [json.loads(text) for text in texts] == [payload for _, _, payload in stored]


def test_a_batch_with_a_thread_that_is_gone_stores_nothing_for_any_thread(make_thread):
    from agents_core.runtime.storage.event_store_sql import events_store_many

    pairs = _threads_and_runs(make_thread, 3)
    gone = pairs[1][0]
    gone_id = gone.pk
    gone.delete()
    with pytest.raises(Thread.DoesNotExist, match=str(gone_id)):
        events_store_many(
            [
                (thread_id, None, [{"type": "text-delta", "textDelta": "x"}])
                for thread_id in (pairs[0][0].pk, gone_id, pairs[2][0].pk)
            ]
        )
    for thread, _ in (pairs[0], pairs[2]):
        assert _stored(thread) == []
        assert Thread.objects.get(pk=thread.pk).last_seq == 0


def test_the_writer_stores_again_on_a_new_connection_when_its_own_died(make_thread):
    """The database restarted (here: the writer's connection killed): the batch is stored
    on a new connection, the error of the dead one is Django's OperationalError to retry."""
    import psycopg
    from django.db import connection

    from agents_core.runtime.storage.db import with_reconnect
    from agents_core.runtime.storage.event_store_sql import events_store_many

    [(thread, run)] = _threads_and_runs(make_thread, 1)
    events_store_many([(thread.pk, run.pk, [{"type": "text-delta", "textDelta": "before"}])])
    dead = connection.connection.info.backend_pid
    params = connection.get_connection_params()
    with psycopg.connect(
        dbname=connection.settings_dict["NAME"],
        host=params.get("host"),
        port=params.get("port"),
        user=params.get("user"),
        autocommit=True,
    ) as admin:
        admin.execute("SELECT pg_terminate_backend(%s)", [dead])
    with_reconnect(
        events_store_many, [(thread.pk, run.pk, [{"type": "text-delta", "textDelta": "after"}])]
    )
    assert connection.connection.info.backend_pid != dead
    assert [(seq, payload["textDelta"]) for seq, _, payload in _stored(thread)] == [
        (1, "before"),
        (2, "after"),
    ]


async def test_a_thread_whose_only_subscribers_are_told_directly_is_not_published(
    make_thread, monkeypatch
):
    """The inline executor's usual case (the chat's socket is in the process that runs
    its run): nothing goes through Redis until another process follows the thread."""
    from studio.redis_link import Link

    _on_redis(monkeypatch, settings.REDIS_URL)
    monkeypatch.setattr(bus_redis.Publisher, "ALONE_SECONDS", 0.3)
    published: list[bytes] = []
    original = Link.publish

    def counting(self: Any, messages: list, counted: Any) -> None:
        published.extend(data for _, data, _ in messages if data[:1] == b"E")
        original(self, messages, counted)

    monkeypatch.setattr(Link, "publish", counting)
    [(thread, run)] = await database_sync_to_async(_threads_and_runs)(make_thread, 1)
    collector = Collector()
    local.subscribe(thread.pk, collector)
    await bus_redis.follow(str(thread.pk))  # this process follows it, as its socket does
    sink = EventSink(thread_id=thread.pk, run_id=run.pk, interval=60)
    other = OtherProcess()

    async def send(text: str) -> None:
        sink.delta(sink.base("text-delta", textDelta=text))
        await asyncio.sleep(0.05)  # the publish and its count

    try:
        await sink.emit("run-start", resumed=False)
        await send("a")  # the first publish counts the thread's followers: this process
        before = len(published)
        await send("b")
        await send("c")
        assert published[before:] == []  # told directly, not published
        await other.link.subscribe(bus_redis.channel(str(thread.pk)))  # another process
        await asyncio.sleep(0.3)
        await send("d")  # published again after ALONE_SECONDS, and counted: followed
        await send("e")
        events = await other.events(thread.pk, 2)
        assert [e["textDelta"] for e in events] == ["d", "e"]
        assert [seq for seq, _ in collector.items] == [1, 2, 3, 4, 5, 6]
        await sink.release()
    finally:
        local.unsubscribe(thread.pk, collector)
        bus_redis.unfollow(str(thread.pk))
        other.link.close()
