"""Stream events: numbered per thread, stored, then published to the thread's group.

Sequence numbers come from one atomic `UPDATE thread SET last_seq = last_seq + n
RETURNING last_seq`, in the same transaction as the insert of the events: a second
writer (another process, a Celery worker) waits on the thread's row until the first
commits, so an event is always stored before any later-numbered event is published, and a
subscriber that sees a gap can always fetch the missing events from the database.

Deltas (`text-delta`, `tool-input-delta`) are coalesced for a few tens of milliseconds
before they are stored and published: consecutive text deltas become one, consecutive
argument deltas of a call become one event with the joined text and all its patches.
Other events flush what is buffered, in order.
"""

from __future__ import annotations

import asyncio
import logging
import time
from typing import Any

from django.conf import settings
from django.db import connection, transaction
from django.utils import timezone

from agents_core.models import StreamEvent, Thread
from agents_core.runtime import stats
from agents_core.runtime.db import db
from agents_core.runtime.partial_json import compact_patches, merge_patches

logger = logging.getLogger(__name__)

DELTA_TYPES = frozenset({"text-delta", "tool-input-delta"})


def thread_group(thread_id: Any) -> str:
    return f"thread_{thread_id}"


def events_store(*, thread_id: Any, run_id: Any, events: list[dict[str, Any]]) -> None:
    """Number and insert events (sets each event's `seq`), in one transaction."""
    table = Thread._meta.db_table
    with transaction.atomic():
        with connection.cursor() as cursor:
            cursor.execute(
                f"UPDATE {table} SET last_seq = last_seq + %s, updated_at = %s "  # noqa: S608
                "WHERE id = %s RETURNING last_seq",
                [len(events), timezone.now(), Thread._meta.pk.get_db_prep_value(
                    thread_id, connection)],
            )
            last = cursor.fetchone()[0]
        first = last - len(events) + 1
        rows = []
        for offset, event in enumerate(events):
            event["seq"] = first + offset
            rows.append(StreamEvent(thread_id=thread_id, run_id=run_id, seq=event["seq"],
                                    type=event["type"], payload=event))
        StreamEvent.objects.bulk_create(rows)


def _layer() -> Any:
    from channels.layers import get_channel_layer

    return get_channel_layer()


async def events_publish(*, thread_id: Any, events: list[dict[str, Any]]) -> None:
    layer = _layer()
    if layer is not None and events:
        await layer.group_send(thread_group(thread_id), {"type": "stream.events", "events": events})


def events_emit_sync(*, thread_id: Any, run_id: Any, events: list[dict[str, Any]]) -> None:
    """Store and publish from synchronous code (services, Celery tasks), after commit."""
    from asgiref.sync import async_to_sync

    events_store(thread_id=thread_id, run_id=run_id, events=events)

    def publish() -> None:
        async_to_sync(events_publish)(thread_id=thread_id, events=events)

    transaction.on_commit(publish)


def publish_unsequenced_sync(*, thread_id: Any, event: dict[str, Any]) -> None:
    """Not stored, not numbered (answers and hints, never part of the transcript)."""
    from asgiref.sync import async_to_sync

    layer = _layer()
    if layer is not None:
        async_to_sync(layer.group_send)(
            thread_group(thread_id), {"type": "stream.events", "events": [event]}
        )


def coalesce(buffer: list[dict[str, Any]], event: dict[str, Any]) -> None:
    """Append a delta to a batch, joined to the last event when it continues it: text to
    text, argument text and patches of the same call to that call's delta."""
    if buffer:
        last = buffer[-1]
        if last["type"] == event["type"] == "text-delta":
            last["textDelta"] += event["textDelta"]
            return
        if (last["type"] == event["type"] == "tool-input-delta"
                and last["toolCallId"] == event["toolCallId"]):
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
    """The run's way out: `delta()` for coalesced deltas, `await emit()` for the rest."""

    def __init__(self, *, thread_id: Any, run_id: Any, interval: float | None = None) -> None:
        self.thread_id = thread_id
        self.run_id = str(run_id)
        self.interval = (
            interval if interval is not None
            else getattr(settings, "STUDIO_STREAM_BATCH_MS", 30) / 1000
        )
        self.buffer: list[dict[str, Any]] = []
        self.lock = asyncio.Lock()
        self.timer: asyncio.Task | None = None
        self.failed: BaseException | None = None
        self.published = 0

    def base(self, type_: str, **fields: Any) -> dict[str, Any]:
        return {"type": type_, "runId": self.run_id, **fields}

    def delta(self, event: dict[str, Any]) -> None:
        """Buffer a delta, merged into the previous one when it continues it."""
        coalesce(self.buffer, event)
        if self.timer is None:
            self.timer = asyncio.ensure_future(self._flush_later())

    async def _flush_later(self) -> None:
        await asyncio.sleep(self.interval)
        self.timer = None
        try:
            await self.flush()
        except Exception as exc:  # noqa: BLE001 - surfaced by the next emit()
            logger.exception("Flushing stream events failed")
            self.failed = exc

    async def emit(self, type_: str, **fields: Any) -> dict[str, Any]:
        """Store and publish an event (after everything buffered before it)."""
        event = self.base(type_, **fields)
        self.buffer.append(event)
        await self.flush()
        return event

    async def flush(self) -> None:
        if self.failed is not None:
            failed, self.failed = self.failed, None
            raise failed
        async with self.lock:
            if not self.buffer:
                return
            events, self.buffer = self.buffer, []
            started = time.perf_counter()
            for event in events:
                if event["type"] == "tool-input-delta" and len(event.get("patches", ())) > 1:
                    event["patches"] = compact_patches(event["patches"])
            await db(events_store, thread_id=self.thread_id, run_id=self.run_id, events=events)
            stored = time.perf_counter()
            await events_publish(thread_id=self.thread_id, events=events)
            self.published += len(events)
            stats.add("flushes")
            stats.add("events", len(events))
            stats.add("store_s", stored - started)
            stats.add("publish_s", time.perf_counter() - stored)

    async def close(self) -> None:
        if self.timer is not None:
            self.timer.cancel()
            self.timer = None
        await self.flush()
