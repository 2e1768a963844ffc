"""Deliver first, store right after (runtime/bus/events.py, runtime/bus): a run's sink
numbers its thread's events, subscribers get each one at once, the stream writer stores
them behind; reconnects replay the store and the unstored tail with no gap and no
duplicate; other writers' events are numbered among the run's; a run's process that dies
loses what it had not stored, and its clients start over from the store."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import time

import pytest
from channels.db import database_sync_to_async
from django.test import override_settings

from agents_core.models import Run, RunStatus, StreamEvent
from agents_core.runtime.bus.events import EventSink, events_emit_sync
from agents_core.runtime.execution.processes import process_name
from tests.agents_core.runtime.conftest import events_of
from tests.agents_core.runtime.test_run_worker import (
    _session_cookie,
    receive_until,
    run_worker_process,
)
from tests.agents_core.runtime.test_websocket import communicator
from tests.conftest import daphne_process

pytestmark = pytest.mark.django_db(transaction=True)

FOREVER = 600  # a storage window longer than any test: nothing is stored until a flush


def _run(thread, status: str = RunStatus.COMPLETED, worker: str = "") -> Run:
    return Run.objects.create(thread=thread, agent=thread.agent, status=status, worker=worker)


def _stored(thread) -> list[dict]:
    return [e.payload for e in StreamEvent.objects.filter(thread=thread).order_by("seq")]


async def _receive(comm, count: int) -> list[dict]:
    return [await comm.receive_json_from(timeout=10) for _ in range(count)]


async def test_a_subscriber_in_this_process_gets_each_delta_before_it_is_stored(make_thread, owner):
    thread = await database_sync_to_async(make_thread)()
    run = await database_sync_to_async(_run)(thread)
    comm = communicator(thread, owner)
    await comm.connect()
    sink = EventSink(thread_id=thread.pk, run_id=run.pk, interval=FOREVER)
    await sink.emit("run-start", resumed=False)
    sink.delta(sink.base("text-delta", textDelta="Hello"))
    received = await _receive(comm, 2)
    assert [(e["seq"], e["type"]) for e in received] == [(1, "run-start"), (2, "text-delta")]
    # Received, and not stored yet: the row comes after.
    assert await database_sync_to_async(_stored)(thread) == []
    await sink.emit("tool-input-start", toolCallId="c1", toolName="t", kind="code", step=1)
    sink.delta(
        sink.base(
            "tool-input-delta",
            toolCallId="c1",
            argsTextDelta='{"a"',
            patches=[{"op": "set", "path": "", "value": {}}],
        )
    )
    sink.delta(sink.base("text-delta", textDelta=" world"))
    await sink.emit("step-finish", step=1, finishReason="stop")
    received += await _receive(comm, 4)
    await sink.release()
    stored = await database_sync_to_async(_stored)(thread)
    # Every event stored, in the order it was delivered, with the numbers it was sent.
    assert received == stored
    assert [e["seq"] for e in stored] == [1, 2, 3, 4, 5, 6]
    assert await comm.receive_nothing(timeout=0.2)
    await comm.disconnect()


async def test_a_reconnect_mid_stream_gets_no_gap_and_no_duplicate(make_thread, owner):
    thread = await database_sync_to_async(make_thread)()
    run = await database_sync_to_async(_run)(thread)
    sink = EventSink(thread_id=thread.pk, run_id=run.pk, interval=FOREVER)
    await sink.emit("run-start", resumed=False)
    for word in ("one", " two", " three"):
        sink.delta(sink.base("text-delta", textDelta=word))
        await asyncio.sleep(0)  # the pass ends: each word is its own event
    assert await database_sync_to_async(_stored)(thread) == []
    # While the tail is not stored: replayed from the sink's tail.
    early = communicator(thread, owner, after=2)
    await early.connect()
    replayed = await _receive(early, 2)
    assert [e["seq"] for e in replayed] == [3, 4]
    sink.delta(sink.base("text-delta", textDelta=" four"))
    assert [e["seq"] for e in await _receive(early, 1)] == [5]
    await sink.flush()
    # After it is stored: replayed from the database, then live.
    late = communicator(thread, owner, after=3)
    await late.connect()
    assert [e["seq"] for e in await _receive(late, 2)] == [4, 5]
    sink.delta(sink.base("text-delta", textDelta=" five"))
    await sink.emit("run-finish", status="completed")
    for comm in (early, late):
        assert [e["seq"] for e in await _receive(comm, 2)] == [6, 7]
        assert await comm.receive_nothing(timeout=0.3)
    await sink.release()
    assert [e["seq"] for e in await database_sync_to_async(_stored)(thread)] == list(range(1, 8))
    for comm in (early, late):
        await comm.disconnect()


async def test_another_writer_s_events_are_numbered_among_the_run_s_in_order(make_thread, owner):
    """A signal sent from sync code (a view, a Celery task) while a run of this process
    streams is handed to the run's sink: one numbering, the order events were sent."""
    thread = await database_sync_to_async(make_thread)()
    run = await database_sync_to_async(_run)(thread, RunStatus.RUNNING, process_name())
    comm = communicator(thread, owner)
    await comm.connect()
    sink = EventSink(thread_id=thread.pk, run_id=run.pk, interval=FOREVER, owner=run.worker)
    await sink.emit("run-start", resumed=False)
    sink.delta(sink.base("text-delta", textDelta="before"))
    await database_sync_to_async(events_emit_sync)(
        thread_id=thread.pk,
        run_id=None,
        events=[{"type": "notification", "runId": None, "text": "meanwhile"}],
    )
    received = await _receive(comm, 3)
    sink.delta(sink.base("text-delta", textDelta="after"))
    await sink.emit("step-finish", step=1)
    received += await _receive(comm, 2)
    assert [(e["seq"], e["type"]) for e in received] == [
        (1, "run-start"),
        (2, "text-delta"),
        (3, "notification"),
        (4, "text-delta"),
        (5, "step-finish"),
    ]
    await sink.release()
    assert await database_sync_to_async(_stored)(thread) == received
    # Released (the run's status about to leave `running`): the database numbers again.
    await database_sync_to_async(Run.objects.filter(pk=run.pk).update)(status=RunStatus.COMPLETED)
    await database_sync_to_async(events_emit_sync)(
        thread_id=thread.pk, run_id=None, events=[{"type": "notification", "text": "later"}]
    )
    assert [e["seq"] for e in await _receive(comm, 1)] == [6]
    await comm.disconnect()


# --- across processes: Daphne relays, a run worker process owns the thread ----------------

WORKER_ENV = {
    "STUDIO_RUN_EXECUTOR": "worker",
    "STUDIO_CODE_MODULES": "tests.agents_core.runtime.definitions",
    "STUDIO_STREAM_BATCH_MS": str(FOREVER * 1000),
}


def _socket(url: str, thread, cookie: str, after: int | None = None):
    import websockets.sync.client

    ws_url = url.replace("http", "ws") + f"/ws/threads/{thread.pk}/"
    if after is not None:
        ws_url += f"?after={after}"
    return websockets.sync.client.connect(
        ws_url, additional_headers={"Cookie": cookie, "Origin": url}, open_timeout=30
    )


def _redis_layer():
    from django.conf import settings

    from studio.settings.services import redis_channel_layer

    return {
        "default": redis_channel_layer(
            settings.REDIS_URL,
            kind=settings.STUDIO_CHANNEL_LAYER,
            prefix=os.environ.get("STUDIO_CHANNEL_PREFIX", "studio-test"),
        )
    }


def _chat(ws, text: str, delay: float) -> None:
    ws.send(
        json.dumps(
            {
                "type": "chat",
                "text": text,
                "options": {"providerOptions": {"studio": {"delay": delay}}},
            }
        )
    )


def test_a_worker_s_events_reach_another_process_at_once_and_a_reconnect_misses_nothing(
    synced, make_thread, owner
):
    """The run's process (a run worker) publishes each event through Redis before storing
    it; a socket that connects mid-stream to Daphne, while nothing is stored yet, gets the
    events it missed once the worker stored them, then the rest: no gap, no duplicate. A
    notification sent meanwhile from this process is forwarded to the worker and numbered
    among the run's events."""
    thread = make_thread()
    cookie = _session_cookie(owner)
    first: list[dict] = []
    second: list[dict] = []
    with daphne_process(**WORKER_ENV) as url, run_worker_process(**WORKER_ENV):
        with _socket(url, thread, cookie) as ws:
            _chat(ws, "tell me about the weather", 0.2)
            deadline = time.monotonic() + 90
            while sum(e["type"] == "text-delta" for e in first) < 3:
                receive_until(ws, {"text-delta"}, first, deadline)
            # Delivered and not stored: the window outlasts the test, and the run is
            # still streaming (it stores everything when it ends). Only the run-start
            # is stored, with the run's row (run_start).
            assert [e["type"] for e in events_of(thread)] == ["run-start"]
            with override_settings(CHANNEL_LAYERS=_redis_layer()):
                events_emit_sync(
                    thread_id=thread.pk,
                    run_id=None,
                    events=[{"type": "notification", "runId": None, "text": "meanwhile"}],
                )
            with _socket(url, thread, cookie, after=1) as late:
                receive_until(ws, {"run-finish", "run-error"}, first, deadline)
                receive_until(late, {"run-finish", "run-error"}, second, deadline)
    assert first[-1]["type"] == "run-finish"
    seqs = [e["seq"] for e in first]
    assert seqs == list(range(1, len(seqs) + 1))
    assert [e["seq"] for e in second] == seqs[1:]
    assert second == first[1:]
    assert "notification" in [e["type"] for e in first]
    assert events_of(thread) == first  # every event stored, as it was sent


def test_a_killed_worker_loses_what_it_had_not_stored_and_its_clients_start_over(
    synced, make_thread, owner
):
    """What a crash can lose: the events the run's process sent and had not stored (here
    all of them: the window outlasts the test; by default at most one window, 60 ms, and
    the store under way). The run is ended as interrupted after what is stored; a socket
    that was sent more is told to start over (`reset`), and so is one that reconnects
    with a seq the store never had."""
    thread = make_thread()
    cookie = _session_cookie(owner)
    env = {
        **WORKER_ENV,
        "STUDIO_RUN_WORKER_POLL_SECONDS": "0.3",
        "STUDIO_RUN_WORKER_DEAD_SECONDS": "1",
    }
    received: list[dict] = []
    with daphne_process(**env) as url, _socket(url, thread, cookie) as ws:
        with run_worker_process(**env) as victim:
            _chat(ws, "tell me about the weather", 0.3)
            deadline = time.monotonic() + 90
            while sum(e["type"] == "text-delta" for e in received) < 2:
                receive_until(ws, {"text-delta"}, received, deadline)
            os.kill(victim.pid, signal.SIGKILL)
            victim.wait()
        seen = received[-1]["seq"]
        # delivered, never stored (but the run-start, stored with the run's row)
        assert [e["type"] for e in events_of(thread)] == ["run-start"]
        with run_worker_process(name="rescuer", **env):
            receive_until(ws, {"run-error"}, received, time.monotonic() + 60)
        reset = received[-2]
        assert reset == {"type": "reset", "lastSeq": 1}  # the run-start, stored with the run
        assert received[-1]["seq"] == 2 and received[-1]["code"] == "interrupted"
        assert [e["type"] for e in events_of(thread)] == ["run-start", "run-error"]
        with _socket(url, thread, cookie, after=seen) as again:
            assert json.loads(again.recv(timeout=30)) == {"type": "reset", "lastSeq": 2}
    run = Run.objects.get(thread=thread)
    assert run.status == RunStatus.FAILED


def test_inline_runs_deliver_from_daphne_itself_and_store_everything(synced, make_thread, owner):
    """The inline executor: the run executes in Daphne, whose consumers it tells directly."""
    thread = make_thread()
    cookie = _session_cookie(owner)
    env = {"STUDIO_CODE_MODULES": "tests.agents_core.runtime.definitions"}
    received: list[dict] = []
    with daphne_process(**env) as url, _socket(url, thread, cookie) as ws:
        _chat(ws, "use weather_lookup for Paris", 0.0)
        receive_until(ws, {"run-finish", "run-error"}, received, time.monotonic() + 90)
    assert received[-1]["type"] == "run-finish"
    assert [e["seq"] for e in received] == list(range(1, len(received) + 1))
    # Stored before the run ended (its last events are stored, then sent).
    assert events_of(thread) == received
