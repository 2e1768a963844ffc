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
from channels.layers import get_channel_layer
from django.conf import settings

from agents_core.models import Run, StreamEvent, Thread
from agents_core.runtime.events import EventSink, group_message_events, thread_group

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


async def test_the_events_of_many_runs_are_stored_in_one_batch_in_order(make_thread):
    pairs = await database_sync_to_async(_threads_and_runs)(make_thread, 5)
    sinks = [EventSink(thread_id=thread.pk, run_id=run.pk, interval=0.05) for thread, run in pairs]
    layer = get_channel_layer()
    channel = await layer.new_channel()
    await layer.group_add(thread_group(pairs[2][0].pk), channel)
    writer = sinks[0].writer
    assert all(sink.writer is writer for sink in sinks)
    before = writer.batches

    async def one(sink: EventSink, number: int) -> None:
        sink.delta(sink.base("text-delta", textDelta=f"hello {number}"))
        sink.delta(sink.base("text-delta", textDelta=" and more"))
        await sink.emit("step-finish", step=1)

    await asyncio.gather(*(one(sink, n) for n, sink in enumerate(sinks)))
    # Five runs, one write: the sinks buffered, the writer took them all together.
    assert writer.batches - before == 1
    for number, (thread, _) in enumerate(pairs):
        rows = await database_sync_to_async(_stored)(thread)
        assert [(seq, kind) for seq, kind, _ in rows] == [(1, "text-delta"), (2, "step-finish")]
        assert rows[0][2]["textDelta"] == f"hello {number} and more"  # coalesced
        refreshed = await database_sync_to_async(Thread.objects.get)(pk=thread.pk)
        assert refreshed.last_seq == 2
    message = await asyncio.wait_for(layer.receive(channel), 5)
    # Published as the JSON that was stored, for the consumer to send as it is.
    assert [seq for seq, _ in message["encoded"]] == [1, 2]
    assert [(e["seq"], e["type"]) for e in group_message_events(message)] == [
        (1, "text-delta"),
        (2, "step-finish"),
    ]
    # A later batch continues each thread's numbering.
    await sinks[0].emit("run-finish", status="completed")
    rows = await database_sync_to_async(_stored)(pairs[0][0])
    assert [seq for seq, _, _ in rows] == [1, 2, 3]


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
    for index in (0, 2):
        rows = await database_sync_to_async(_stored)(pairs[index][0])
        assert [(seq, kind) for seq, kind, _ in rows] == [(1, "run-start")]
    assert sinks[0].published == sinks[2].published == 1 and sinks[1].published == 0
    # The failure was reported once; the surviving sinks keep working.
    await sinks[2].emit("run-finish", status="completed")
    assert [seq for seq, _, _ in await database_sync_to_async(_stored)(pairs[2][0])] == [1, 2]


async def test_deltas_alone_are_written_after_the_interval_without_an_emit(make_thread):
    [(thread, run)] = await database_sync_to_async(_threads_and_runs)(make_thread, 1)
    sink = EventSink(thread_id=thread.pk, run_id=run.pk, interval=0.01)
    sink.delta(sink.base("text-delta", textDelta="streamed"))
    for _ in range(500):
        if sink.published:
            break
        await asyncio.sleep(0.01)
    rows = await database_sync_to_async(_stored)(thread)
    assert [(seq, kind, payload["textDelta"]) for seq, kind, payload in rows] == [
        (1, "text-delta", "streamed")
    ]


async def _until_published(sink: EventSink, count: int) -> None:
    for _ in range(500):
        if sink.published >= count:
            return
        await asyncio.sleep(0.01)


async def test_an_idle_writer_writes_a_delta_at_once_and_holds_the_next_for_the_interval(
    make_thread,
):
    """A lone delta does not wait for a window nobody shares; what follows it within the
    interval coalesces (the interval is a minute here: "at once" cannot be the timer)."""
    [(thread, run)] = await database_sync_to_async(_threads_and_runs)(make_thread, 1)
    sink = EventSink(thread_id=thread.pk, run_id=run.pk, interval=60)
    sink.delta(sink.base("text-delta", textDelta="first"))
    await _until_published(sink, 1)
    assert sink.published == 1
    sink.delta(sink.base("text-delta", textDelta=" second"))
    sink.delta(sink.base("text-delta", textDelta=" third"))
    await asyncio.sleep(0.2)
    assert sink.published == 1  # held: the last batch started less than a minute ago
    await sink.emit("step-finish", step=1)  # an emit does not wait
    rows = await database_sync_to_async(_stored)(thread)
    assert [(seq, kind, payload.get("textDelta")) for seq, kind, payload in rows] == [
        (1, "text-delta", "first"),
        (2, "text-delta", " second third"),
        (3, "step-finish", None),
    ]


def test_the_orm_store_numbers_and_writes_like_the_postgresql_one(make_thread):
    """SQLite (the embedded studio) takes the ORM path: same numbering, same rows."""
    from django.db import transaction

    from agents_core.runtime.event_store import _store_many_orm, _store_many_postgresql

    results = []
    for store in (_store_many_postgresql, _store_many_orm):
        pairs = _threads_and_runs(make_thread, 2)
        Thread.objects.filter(pk=pairs[1][0].pk).update(last_seq=7)
        batches = [
            (
                str(thread.pk),
                str(run.pk),
                [{"type": "text-delta", "textDelta": f"t{n}"}, {"type": "step-finish", "step": 1}],
            )
            for n, (thread, run) in enumerate(pairs)
        ]
        with transaction.atomic():
            texts = store(sorted(str(thread.pk) for thread, _ in pairs), batches)
        # What subscribers are sent is what was stored.
        assert [[json.loads(text) for text in encoded] for encoded in texts] == [
            [payload for _, _, payload in _stored(thread)] for thread, _ in pairs
        ]
        results.append(
            [
                (
                    Thread.objects.get(pk=thread.pk).last_seq,
                    [
                        (seq, kind, {k: v for k, v in payload.items() if k != "runId"})
                        for seq, kind, payload in _stored(thread)
                    ],
                )
                for thread, _ in pairs
            ]
        )
    assert (
        results[0]
        == results[1]
        == [
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
    )


def _pubsub_layer(url: str) -> Any:
    from channels_redis.pubsub import RedisPubSubChannelLayer

    return RedisPubSubChannelLayer(hosts=[url], prefix=f"test-writer-{uuid.uuid4().hex[:8]}")


async def test_on_the_pubsub_layer_the_writer_thread_publishes_what_it_stored(
    make_thread, monkeypatch
):
    """Stored and published in the writer's own thread: the event loop is not asked for the
    publish (group_send_many, the loop's way, is not called)."""
    from agents_core.runtime import events

    layer = _pubsub_layer(settings.REDIS_URL)
    monkeypatch.setattr(events, "_layer", lambda: layer)

    async def on_the_loop(*args: Any) -> None:
        raise AssertionError("published on the loop")

    monkeypatch.setattr(events, "group_send_many", on_the_loop)
    pairs = await database_sync_to_async(_threads_and_runs)(make_thread, 2)
    try:
        channels = []
        for thread, _ in pairs:
            channels.append(await layer.new_channel())
            await layer.group_add(thread_group(thread.pk), channels[-1])
        sinks = [
            EventSink(thread_id=thread.pk, run_id=run.pk, interval=0.05) for thread, run in pairs
        ]

        async def one(sink: EventSink, number: int) -> None:
            sink.delta(sink.base("text-delta", textDelta=f"run {number}"))
            await sink.emit("step-finish", step=1)

        await asyncio.gather(*(one(sink, number) for number, sink in enumerate(sinks)))
        await sinks[0].emit("run-finish", status="completed")
        for number, channel in enumerate(channels):
            message = await asyncio.wait_for(layer.receive(channel), 5)
            assert [(e["seq"], e["type"]) for e in group_message_events(message)] == [
                (1, "text-delta"),
                (2, "step-finish"),
            ]
            assert group_message_events(message)[0]["textDelta"] == f"run {number}"
        message = await asyncio.wait_for(layer.receive(channels[0]), 5)
        assert [(e["seq"], e["type"]) for e in group_message_events(message)] == [(3, "run-finish")]
        assert [sink.published for sink in sinks] == [3, 2]
    finally:
        await layer.flush()


async def test_when_redis_is_down_the_events_are_stored_and_the_run_learns_at_emit(
    make_thread, monkeypatch
):
    from agents_core.runtime import events

    with socket.socket() as sock:  # a port nothing listens on
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    layer = _pubsub_layer(f"redis://127.0.0.1:{port}/0")
    monkeypatch.setattr(events, "_layer", lambda: layer)
    [(thread, run)] = await database_sync_to_async(_threads_and_runs)(make_thread, 1)
    sink = EventSink(thread_id=thread.pk, run_id=run.pk, interval=0.01)
    with pytest.raises(Exception, match="[Cc]onnect"):
        await sink.emit("run-start", resumed=False)
    # Stored (a client that reconnects replays it), not counted as published.
    assert [(seq, kind) for seq, kind, _ in await database_sync_to_async(_stored)(thread)] == [
        (1, "run-start")
    ]
    assert sink.published == 0


def test_writers_of_the_same_threads_at_once_number_every_event_exactly_once(make_thread):
    """Batches of one thread (one statement, no transaction) and of several (locked in id
    order first) written by many connections at once: each thread's events are numbered
    1..n with no gap or repeat, and each stored payload carries its row's number."""
    from concurrent.futures import ThreadPoolExecutor

    from django.db import connection

    from agents_core.runtime.event_store import events_store_many

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

    from agents_core.runtime.events import events_store

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
    from agents_core.runtime.events import events_store

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
    from agents_core.runtime.event_store import events_store_many

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

    from agents_core.runtime.db import with_reconnect
    from agents_core.runtime.event_store import events_store_many

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
