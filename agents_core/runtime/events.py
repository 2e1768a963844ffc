"""Stream events: numbered per thread, stored (runtime/event_store.py), then published to
the thread's group. An event is always stored before any later-numbered event is
published, so a subscriber that sees a gap can always fetch the missing events from the
database.

Deltas (`text-delta`, `tool-input-delta`) are coalesced for a few tens of milliseconds
before they are stored and published: consecutive text deltas become one, consecutive
argument deltas of a call become one event with the joined text and all its patches.
Other events flush what is buffered, in order.
"""

from __future__ import annotations

import asyncio
import json
import logging
import time
from dataclasses import dataclass
from typing import Any

from django.conf import settings
from django.db import transaction

from agents_core.runtime import stats
from agents_core.runtime.db import db_stream, with_reconnect
from agents_core.runtime.event_store import events_store_many
from agents_core.runtime.patches import compact_patches, merge_patches
from studio.layers import SyncPublisher, group_send_many, group_send_sync, sync_publisher

logger = logging.getLogger(__name__)

DELTA_TYPES = frozenset({"text-delta", "tool-input-delta"})


def thread_group(thread_id: Any) -> str:
    return f"thread_{thread_id}"


def events_store(*, thread_id: Any, run_id: Any, events: list[dict[str, Any]]) -> list[str]:
    """Number and insert events (sets each event's `seq`), in one transaction; returns
    each event as JSON text."""
    return events_store_many([(thread_id, run_id, events)])[0]


def encoded_message(events: list[dict[str, Any]], texts: list[str]) -> dict[str, Any]:
    """A `stream.events` group message of stored events already encoded as JSON: a
    subscriber sends the text as it is (`[seq, text]` pairs; see `group_message_events`)."""
    return {
        "type": "stream.events",
        "encoded": [[event["seq"], text] for event, text in zip(events, texts, strict=True)],
    }


def group_message_events(message: dict[str, Any]) -> list[dict[str, Any]]:
    """The events of a `stream.events` group message, whichever form it has."""
    if "encoded" in message:
        return [json.loads(text) for _, text in message["encoded"]]
    return list(message.get("events", []))


def _layer() -> Any:
    from channels.layers import get_channel_layer

    return get_channel_layer()


def events_emit_sync(*, thread_id: Any, run_id: Any, events: list[dict[str, Any]]) -> None:
    """Store and publish from synchronous code (services, Celery tasks), after commit."""
    texts = events_store(thread_id=thread_id, run_id=run_id, events=events)
    if events:
        transaction.on_commit(
            lambda: group_send_sync(thread_group(thread_id), encoded_message(events, texts))
        )


def coalesce(buffer: list[dict[str, Any]], event: dict[str, Any]) -> None:
    """Append a delta to a batch, joined to the last event when it continues it: text to
    text, argument text and patches of the same call to that call's delta."""
    if buffer:
        last = buffer[-1]
        if last["type"] == event["type"] == "text-delta":
            last["textDelta"] += event["textDelta"]
            return
        if (
            last["type"] == event["type"] == "tool-input-delta"
            and last["toolCallId"] == event["toolCallId"]
        ):
            if "argsTextDelta" in last and "argsTextDelta" in event:
                last["argsTextDelta"] += event["argsTextDelta"]
                merge_patches(last["patches"], event["patches"])
                return
            if "argsTextDelta" not in last and "argsTextDelta" not in event:
                # Transformed values: the newest whole value replaces the previous one.
                last.update(event)
                return
    if event["type"] == "tool-input-delta" and "patches" in event:
        patches: list[dict[str, Any]] = []
        merge_patches(patches, event["patches"])
        event["patches"] = patches
    buffer.append(event)


class EventSink:
    """A run's way out: `delta()` for coalesced deltas, `await emit()` for the rest.

    The sink only buffers; the process's `StreamWriter` stores and publishes what every
    sink buffered, together, once per interval (or at once when an `emit()` waits)."""

    def __init__(self, *, thread_id: Any, run_id: Any, interval: float | None = None) -> None:
        self.thread_id = thread_id
        self.run_id = str(run_id)
        self.buffer: list[dict[str, Any]] = []
        self.failed: BaseException | None = None
        self.published = 0
        self.writer = StreamWriter.for_loop(interval)

    def base(self, type_: str, **fields: Any) -> dict[str, Any]:
        return {"type": type_, "runId": self.run_id, **fields}

    def delta(self, event: dict[str, Any]) -> None:
        """Buffer a delta, merged into the previous one when it continues it."""
        coalesce(self.buffer, event)
        self.writer.mark(self)

    async def emit(self, type_: str, **fields: Any) -> dict[str, Any]:
        """Store and publish an event (after everything buffered before it)."""
        event = self.base(type_, **fields)
        self.buffer.append(event)
        await self.flush()
        return event

    async def flush(self) -> None:
        """Wait until everything buffered so far is stored and published."""
        self._raise_failure()
        if self.buffer:
            await self.writer.flush(self)
            self._raise_failure()

    def _raise_failure(self) -> None:
        if self.failed is not None:
            failed, self.failed = self.failed, None
            raise failed

    async def close(self) -> None:
        await self.flush()


class StreamWriter:
    """Stores and publishes the buffered events of every run of one event loop.

    One batch at a time: it takes every sink's buffer, stores them all in one transaction
    (`events_store_many`) and publishes each thread's events with one group message. A
    batch that fails is retried run by run, so one run's failure (its thread deleted) is
    that run's alone; a run learns of its failure at its next `emit()`.

    When to write: at once when an `emit()` is waiting. Deltas that arrive while a batch
    is being written wait `interval` after it (they coalesce with what follows). A delta
    that finds the writer idle is written at once when the last batch started at least
    `interval` ago, else when it is that old: the writer still starts at most one batch
    per interval, but a delta of a lone slow stream (one chat, 30 deltas a second) neither
    waits for a window nobody shares nor costs the process a timer's wake-up of its own.

    Many runs streaming at once thus cost one database round trip per interval instead of
    one per run, and the batches grow with the load instead of the queue.
    """

    _writers: dict[tuple[asyncio.AbstractEventLoop, float], StreamWriter] = {}

    def __init__(self, loop: asyncio.AbstractEventLoop, interval: float) -> None:
        self.loop = loop
        self.interval = interval
        self.dirty: dict[EventSink, None] = {}
        self.urgent = asyncio.Event()
        self.next_batch: asyncio.Future = loop.create_future()
        self.task: asyncio.Task | None = None
        self.batches = 0  # written so far (tests, diagnostics)
        self.last_started = float("-inf")  # loop time the last batch started

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

    async def flush(self, sink: EventSink) -> None:
        batch = self.next_batch  # the batch that will take what the sink holds now
        self.mark(sink, urgent=True)
        await asyncio.shield(batch)

    async def _run(self) -> None:
        # Idle until now: due when the last batch is `interval` old (maybe already).
        due = self.last_started + self.interval
        while self.dirty:
            wait = due - self.loop.time()
            if wait > 0 and not self.urgent.is_set():
                try:
                    await asyncio.wait_for(self.urgent.wait(), wait)
                except TimeoutError:
                    pass
            self.urgent.clear()
            self.last_started = self.loop.time()
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
            done.set_result(None)
            # What arrived during the write waits to coalesce with what follows.
            due = self.loop.time() + self.interval

    async def _write(self, sinks: list[EventSink]) -> None:
        batch = [(sink, sink.buffer) for sink in sinks if sink.buffer]
        for sink in sinks:
            sink.buffer = []
        if not batch:
            return
        self.batches += 1
        started = time.perf_counter()
        for _, events in batch:
            for event in events:
                if event["type"] == "tool-input-delta" and len(event.get("patches", ())) > 1:
                    event["patches"] = compact_patches(event["patches"])
        layer = _layer()
        publisher = sync_publisher(layer) if layer is not None else None
        written = await db_stream(
            _store_and_publish,
            [(sink.thread_id, sink.run_id, events) for sink, events in batch],
            publisher,
        )
        stored = []
        for (sink, events), result in zip(batch, written.results, strict=True):
            if isinstance(result, Exception):
                logger.error("Storing stream events of run %s failed: %s", sink.run_id, result)
                sink.failed = result  # that run's failure, at its next emit()
            else:
                stored.append((sink, events, result))
        published = time.perf_counter()
        if written.publish_error is None and not written.published and layer is not None and stored:
            try:
                await group_send_many(
                    layer,
                    [
                        (thread_group(sink.thread_id), encoded_message(events, encoded))
                        for sink, events, encoded in stored
                    ],
                )
            except Exception as exc:  # noqa: BLE001 - Redis down: each run learns at emit()
                written.publish_error = exc
        if written.publish_error is not None:
            logger.error("Publishing stream events failed: %s", written.publish_error)
            for sink, _, _ in stored:
                sink.failed = written.publish_error
            stored = []
        for sink, events, _ in stored:
            sink.published += len(events)
        stats.add("flushes")
        stats.add("events", sum(len(events) for _, events in batch))
        stats.add("store_s", published - started)
        stats.add("publish_s", time.perf_counter() - published)


@dataclass
class _Written:
    results: list[list[str] | Exception]  # per batch: the stored events' JSON, or the error
    published: bool = False
    publish_error: Exception | None = None


def _store_and_publish(
    batches: list[tuple[Any, Any, list[dict[str, Any]]]], publisher: SyncPublisher | None
) -> _Written:
    """The stream writer's thread: store the batches (all at once; one by one when that
    fails, so that one run's failure, its thread deleted, is that run's alone), then
    publish what was stored when the layer can be published from a thread."""
    started = time.perf_counter()
    try:
        written = _Written(list(with_reconnect(events_store_many, batches)))
    except Exception:  # noqa: BLE001 - find whose events cannot be stored
        written = _Written([])
        for thread_id, run_id, events in batches:
            try:
                written.results.append(
                    events_store(thread_id=thread_id, run_id=run_id, events=events)
                )
            except Exception as exc:  # noqa: BLE001
                written.results.append(exc)
    if publisher is not None:
        messages = [
            (thread_group(thread_id), encoded_message(events, result))
            for (thread_id, _, events), result in zip(batches, written.results, strict=True)
            if not isinstance(result, Exception)
        ]
        try:
            if messages:
                publisher.publish_many(messages)
            written.published = True
        except Exception as exc:  # noqa: BLE001 - Redis down: each run learns at emit()
            written.publish_error = exc
    stats.add("writer_thread_s", time.perf_counter() - started)
    return written
