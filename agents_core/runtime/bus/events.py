"""Stream events: delivered first, stored right after.

A run's `EventSink` owns its thread's numbering while the run streams (runtime/bus/handoff.py
says why it may): it numbers each event from the thread's `last_seq`, publishes it at once
on the bus (runtime/bus: this process's subscribers directly, other processes' over
Redis) and leaves it to the process's `StreamWriter`, which stores what every sink sent in
one statement per `STUDIO_STREAM_BATCH_MS` window. Deltas are never held for a later
one: those a run produces within one pass of its event loop (chunks that came in one read
of the model's stream) continue one another and go out together as one event when the
pass ends (runtime/bus/patches.py: `join_delta`); a slow stream's deltas are each their own.
Before the run's status leaves `running`, the loop calls `release()`: everything is
stored, and the thread's numbering is the database's again.

Other writers (`events_emit_sync`, sync code) number in the database under the thread's
row lock, unless a running run's process owns the thread: then they hand their events to
it (see handoff.py).
"""

from __future__ import annotations

import asyncio
import json
import logging
import time
from typing import Any

from django.conf import settings

from agents_core.runtime.bus import Publisher, owners
from agents_core.runtime.bus.handoff import (
    events_emit_sync,
    events_store,
    listening,
    store_unless_owned,
)
from agents_core.runtime.bus.patches import join_delta, sendable_delta
from agents_core.runtime.execution import stats
from agents_core.runtime.storage.db import db, db_stream, with_reconnect
from agents_core.runtime.storage.event_store_sql import events_store_numbered, thread_seed
from tools_app.redaction import redact_events, secrets_current

# What other modules import from here (the other writers' side lives in handoff.py).
__all__ = [
    "DELTA_TYPES",
    "EventSink",
    "StreamWriter",
    "events_emit_sync",
    "events_store",
]

logger = logging.getLogger(__name__)

DELTA_TYPES = frozenset({"text-delta", "tool-input-delta"})


class EventSink:
    """A run's way out, and its thread's numbering while it streams: `delta()` and
    `await emit()` number an event, deliver it at once and queue it for storage."""

    def __init__(
        self,
        *,
        thread_id: Any,
        run_id: Any,
        interval: float | None = None,
        owner: str | None = None,
    ) -> None:
        self.thread_id = str(thread_id)
        self.run_id = str(run_id)
        self.loop = asyncio.get_running_loop()
        self.seq: int | None = None  # the last number handed out (None: not read yet)
        self.early: list[tuple[Any, dict[str, Any]]] = []  # sent before `seq` was read
        self.tail: list[tuple[int, str]] = []  # delivered, not stored yet
        self.unstored: list[tuple[Any, str]] = []  # (run, JSON) for the next batch
        self.failed: BaseException | None = None
        self.published = 0  # delivered so far
        self.stored = 0  # the highest seq stored
        self.released = False
        self.held: dict[str, Any] | None = None  # the pass's delta, sent when it ends
        self.release_soon = False
        self.owner = owner
        self.writer = StreamWriter.for_loop(interval)
        self.publisher = Publisher.for_loop()
        self._seeding: asyncio.Task | None = None
        # The run's secrets (tools_app.redaction): no event leaves this sink with one.
        self.secrets = secrets_current()
        owners.own(self, owner)

    def base(self, type_: str, **fields: Any) -> dict[str, Any]:
        return {"type": type_, "runId": self.run_id, **fields}

    def delta(self, event: dict[str, Any]) -> None:
        """Number and deliver a delta when this pass of the event loop ends, joined with
        the deltas that continue it in the same pass; it is stored with the next batch."""
        held = self.held
        if held is not None and join_delta(held, event):
            return
        self._send_held()
        if event["type"] not in DELTA_TYPES or event.get("hidden"):
            self._send(event, self.run_id)
            return
        self.held = event
        if not self.release_soon:
            self.release_soon = True
            self.loop.call_soon(self._pass_ended)

    def _pass_ended(self) -> None:
        self.release_soon = False
        self._send_held()

    def _send_held(self) -> None:
        held = self.held
        if held is not None:
            self.held = None
            self._send(sendable_delta(held), self.run_id)

    async def emit(self, type_: str, **fields: Any) -> dict[str, Any]:
        """Number and deliver an event now (after everything sent before it)."""
        self._raise_failure()
        event = self.base(type_, **fields)
        if self.released:
            await self._emit_stored(event)
            return event
        await self._seeded()
        self._send(event, self.run_id)
        return event

    def external(self, run_id: Any, events: list[dict[str, Any]]) -> None:
        """Another writer's events (handoff.take), numbered among the run's own."""
        for event in events:
            self._send(dict(event), run_id)

    def _send(self, event: dict[str, Any], run_id: Any) -> None:
        if self.held is not None:
            self._send_held()  # numbered before anything sent after it
        if self.seq is None:
            self.early.append((run_id, event))
            self._seed_soon()
            return
        self.seq += 1
        event["seq"] = self.seq
        text = json.dumps(event, default=str)
        if self.secrets:
            text = self.secrets.text(text)
        self.tail.append((self.seq, text))
        self.unstored.append((run_id, text))
        self.published += 1
        self.publisher.publish(self.thread_id, self.seq, text)
        self.writer.mark(self)

    def _seed_soon(self) -> None:
        if self._seeding is None:
            self._seeding = self.loop.create_task(self._seed())

    async def _seed(self) -> None:
        if self.owner:
            await listening(self.owner)
        seq = await db(thread_seed, self.thread_id)
        self.seq = seq
        early, self.early = self.early, []
        for run_id, event in early:
            self._send(event, run_id)

    async def _seeded(self) -> None:
        if self.seq is not None:
            return
        self._seed_soon()
        assert self._seeding is not None
        await asyncio.shield(self._seeding)

    async def _emit_stored(self, event: dict[str, Any]) -> None:
        """After release: the database numbers (as any other writer's events)."""
        redact_events([event])
        texts = await db(store_unless_owned, self.thread_id, self.run_id, [event], owner_gone=False)
        if texts is not None:
            self.delivered_stored(event, texts[0])

    def delivered_stored(self, event: dict[str, Any], text: str) -> None:
        """Deliver an event the database numbered and stored after release (the run's
        last, stored with its end: services.runs.run_finish)."""
        self.published += 1
        self.publisher.publish(self.thread_id, event["seq"], text)

    async def flush(self) -> None:
        """Wait until everything sent so far is stored."""
        self._send_held()
        self._raise_failure()
        if self._seeding is not None and self.seq is None:
            await self._seeded()
        if self.unstored or self.writer.writing(self):
            await self.writer.flush(self)
            self._raise_failure()

    def _raise_failure(self) -> None:
        if self.failed is not None:
            failed, self.failed = self.failed, None
            raise failed

    async def release(self) -> None:
        """Store what is left and give the thread's numbering back to the database:
        before the run's status leaves `running` (see handoff.py)."""
        if self.released:
            return
        try:
            await self.flush()
        except Exception:  # noqa: BLE001 - the run ends anyway; its status says how
            logger.exception("Run %s: storing its last events failed", self.run_id)
        finally:
            self.released = True
            owners.disown(self)

    async def close(self) -> None:
        await self.release()


class StreamWriter:
    """Stores the events every sink of one event loop delivered, in one statement per
    batch (`events_store_numbered`), `interval` after the first of them (or at once when
    a sink waits in `flush()`). A batch that fails is retried run by run, so one run's
    failure (its thread deleted) is that run's alone; a run learns of it at its next
    `emit()`. Each stored batch tells the threads' subscribers in other processes how far
    the store has come (runtime/bus; a subscription waiting for a gap replays then).

    Many runs streaming at once cost one database round trip per interval, and the
    batches grow with the load instead of the queue."""

    _writers: dict[tuple[asyncio.AbstractEventLoop, float], StreamWriter] = {}

    def __init__(self, loop: asyncio.AbstractEventLoop, interval: float) -> None:
        self.loop = loop
        self.interval = interval
        self.dirty: dict[EventSink, None] = {}
        self.in_batch: set[EventSink] = set()
        self.urgent = asyncio.Event()
        self.next_batch: asyncio.Future = loop.create_future()
        self.task: asyncio.Task | None = None
        self.batches = 0  # written so far (tests, diagnostics)

    @classmethod
    def for_loop(cls, interval: float | None = None) -> StreamWriter:
        """The writer of the running loop (one per interval: tests may ask for another)."""
        loop = asyncio.get_running_loop()
        if interval is None:
            interval = settings.STUDIO_STREAM_BATCH_MS / 1000
        writer = cls._writers.get((loop, interval))
        if writer is None:
            for key in [key for key in cls._writers if key[0].is_closed()]:
                del cls._writers[key]
            writer = cls._writers[(loop, interval)] = cls(loop, interval)
        return writer

    def mark(self, sink: EventSink, *, urgent: bool = False) -> None:
        self.dirty[sink] = None
        if urgent:
            self.urgent.set()
        if self.task is None or self.task.done():
            self.task = self.loop.create_task(self._run())

    def writing(self, sink: EventSink) -> bool:
        return sink in self.in_batch

    async def flush(self, sink: EventSink) -> None:
        while sink.unstored or sink in self.in_batch:
            batch = self.next_batch  # the batch that takes what the sink holds now
            self.mark(sink, urgent=True)
            await asyncio.shield(batch)

    async def _run(self) -> None:
        while self.dirty:
            if not self.urgent.is_set():
                try:
                    await asyncio.wait_for(self.urgent.wait(), self.interval)
                except TimeoutError:
                    pass
            self.urgent.clear()
            sinks, self.dirty = list(self.dirty), {}
            done, self.next_batch = self.next_batch, self.loop.create_future()
            try:
                await self._write(sinks)
            except BaseException as exc:  # noqa: BLE001 - cancelled: tell every waiter
                for sink in sinks:
                    sink.failed = sink.failed or exc
                if not done.done():
                    done.set_result(None)
                raise
            finally:
                self.in_batch.clear()
            done.set_result(None)

    async def _write(self, sinks: list[EventSink]) -> None:
        batch = [(sink, sink.unstored) for sink in sinks if sink.unstored]
        for sink in sinks:
            sink.unstored = []
        if not batch:
            return
        self.in_batch = {sink for sink, _ in batch}
        self.batches += 1
        started = time.perf_counter()
        results = await db_stream(_store, [(sink.thread_id, items) for sink, items in batch])
        for (sink, items), result in zip(batch, results, strict=True):
            if result is not None:
                logger.error("Storing stream events of run %s failed: %s", sink.run_id, result)
                sink.failed = result  # that run's failure, at its next emit()
                continue
            top = json.loads(items[-1][1])["seq"]
            sink.stored = max(sink.stored, top)
            while sink.tail and sink.tail[0][0] <= sink.stored:
                sink.tail.pop(0)
            sink.publisher.stored(sink.thread_id, sink.stored)
        stats.add("flushes")
        stats.add("events", sum(len(items) for _, items in batch))
        stats.add("store_s", time.perf_counter() - started)


def _store(batches: list[tuple[str, list[tuple[Any, str]]]]) -> list[Exception | None]:
    """The stream writer's thread: store every sink's events at once; one by one when that
    fails, so that one run's failure (its thread deleted) is that run's alone."""
    started = time.perf_counter()
    rows = batches
    try:
        with_reconnect(events_store_numbered, _by_run(rows))
        results: list[Exception | None] = [None] * len(batches)
    except Exception:  # noqa: BLE001 - find whose events cannot be stored
        results = []
        for row in rows:
            try:
                events_store_numbered(_by_run([row]))
                results.append(None)
            except Exception as exc:  # noqa: BLE001
                results.append(exc)
    stats.add("writer_thread_s", time.perf_counter() - started)
    return results


def _by_run(
    rows: list[tuple[str, list[tuple[Any, str]]]],
) -> list[tuple[Any, Any, list[str]]]:
    """(thread, run, [JSON]) runs of consecutive events of one run, in order."""
    out: list[tuple[Any, Any, list[str]]] = []
    for thread_id, items in rows:
        for run_id, text in items:
            if out and out[-1][0] == thread_id and out[-1][1] == run_id:
                out[-1][2].append(text)
            else:
                out.append((thread_id, run_id, [text]))
    return out
