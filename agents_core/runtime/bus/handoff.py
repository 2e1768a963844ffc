"""A thread's numbering: who numbers its events (a run's owner, or the database), and the
events of other writers than the run.

While a run streams, the process executing it is the only writer of its thread's events
(one running run per thread): its sink (runtime/bus/events.py) numbers them itself, from the
thread's `last_seq` read under the thread's row lock when the run starts, and is
registered as the thread's owner (runtime/bus/owners.py).

Signals, thread titles, async tool results and a run's recovery are sync code (views,
Celery tasks) that calls `events_emit_sync`. Under the thread's row lock it looks for a
running run claimed by a process. None: the database numbers and stores the events
(`UPDATE thread SET last_seq = last_seq + n` and the insert, one statement), and they
are published on the bus after commit. One: the events go to that process, whose run's
sink numbers them among the run's own: `hand_over` when it is this process, else a
channel-layer message to the process's `writer_channel`, which `listening` receives. A
process that receives them after its run released the thread stores them as above.

Why the database numbering stays right: a run's sink registers as the thread's owner
(and listens) before it reads `last_seq` under the same row lock, so a writer that finds
no owner has stored before the run reads, and one that finds it hands its events over.
A process that does not answer (nobody subscribed to its channel) is dead: its run is
ended as interrupted and the events are numbered after what is stored, published as
`reset` (a subscriber that was sent more starts over: runtime/bus/subscription.py).
"""

from __future__ import annotations

import asyncio
import hashlib
import logging
from typing import Any

from django.db import transaction

from agents_core.runtime import bus
from agents_core.runtime.bus.owners import is_local, owner
from agents_core.runtime.storage.event_store_sql import events_store_many
from tools_app.redaction import redact_events

logger = logging.getLogger(__name__)

_listeners: dict[str, tuple[asyncio.Task, asyncio.Future]] = {}


def events_store(*, thread_id: Any, run_id: Any, events: list[dict[str, Any]]) -> list[str]:
    """Number and insert events (sets each event's `seq`), in one transaction; returns
    each event as JSON text."""
    return events_store_many([(thread_id, run_id, events)])[0]


def events_emit_sync(
    *, thread_id: Any, run_id: Any, events: list[dict[str, Any]], owner_gone: bool = False
) -> None:
    """Number, store and publish events from synchronous code (services, Celery tasks),
    after the caller's transaction commits; or, when a running run's process owns the
    thread, hand them to it to number among the run's events. `owner_gone`: the process
    that owned the thread does not answer (it died): the database numbers them."""
    redact_events(events)  # the caller's secrets (tools_app.redaction) stay with it
    texts = store_unless_owned(thread_id, run_id, events, owner_gone)
    if texts is not None and events:
        items = [(event["seq"], text) for event, text in zip(events, texts, strict=True)]
        # owner_gone: numbered after what is stored; a subscriber that was sent more
        # (published by the dead owner, never stored) starts over.
        transaction.on_commit(lambda: bus.publish_stored([(thread_id, items)], owner_gone))


def store_unless_owned(
    thread_id: Any, run_id: Any, events: list[dict[str, Any]], owner_gone: bool
) -> list[str] | None:
    """Store the events (returns their JSON) unless the thread has a live owner; then
    send them to it after commit (returns None)."""
    from agents_core.models import Run, Thread
    from agents_core.runtime.execution.processes import QUEUED

    with transaction.atomic():
        if not owner_gone:
            # The lock a run's sink takes to read `last_seq` (event_store_sql.thread_seed):
            # an owner registered after this check reads what is stored here.
            Thread.objects.select_for_update(no_key=True).filter(pk=thread_id).values_list(
                "pk"
            ).first()
            holder = (
                Run.objects.running()
                .filter(thread_id=thread_id)
                .exclude(worker__in=["", QUEUED])
                .values_list("worker", flat=True)
                .first()
            )
            if holder and not (is_local(holder) and owner(thread_id) is None):
                key = str(thread_id)
                transaction.on_commit(lambda: _send_to_owner(holder, key, run_id, events))
                return None
        return events_store(thread_id=thread_id, run_id=run_id, events=events)


def _send_to_owner(holder: str, thread_id: str, run_id: Any, events: list[dict[str, Any]]) -> None:
    if is_local(holder):
        if not hand_over(thread_id, run_id, events):
            events_emit_sync(thread_id=thread_id, run_id=run_id, events=events)
        return
    from channels.layers import get_channel_layer

    from studio.layers import sync_publisher

    layer = get_channel_layer()
    message = {
        "type": "stream.append",
        "thread": thread_id,
        "run": str(run_id) if run_id else None,
        "events": events,
    }
    publisher = sync_publisher(layer) if layer is not None else None
    if publisher is not None:
        received = publisher.send_counted(writer_channel(holder), message)
    elif layer is None or layer.__class__.__name__ == "InMemoryChannelLayer":
        received = 0  # one process: a holder that is not this one is gone
    else:
        from asgiref.sync import async_to_sync

        async_to_sync(layer.send)(writer_channel(holder), message)
        received = 1
    if not received:
        logger.warning("Thread %s: its run's process %s does not answer", thread_id, holder)
        events_emit_sync(thread_id=thread_id, run_id=run_id, events=events, owner_gone=True)


def hand_over(thread_id: str, run_id: Any, events: list[dict[str, Any]]) -> bool:
    """Give another writer's events to this process's owner of the thread, on its loop.
    False when there is none (the caller stores them itself)."""
    sink = owner(thread_id)
    if sink is None or sink.loop.is_closed():
        return False
    sink.loop.call_soon_threadsafe(take, thread_id, run_id, events)
    return True


def take(thread_id: str, run_id: Any, events: list[dict[str, Any]]) -> None:
    """On the owner's loop: number and deliver the events among the run's own; if the
    owner released the thread meanwhile, store them as any writer does."""
    sink = owner(thread_id)
    if sink is not None and not sink.released and sink.loop is asyncio.get_running_loop():
        sink.external(run_id, events)
        return
    if sink is not None and not sink.released and hand_over(thread_id, run_id, events):
        return
    from agents_core.runtime.storage.db import db

    task = asyncio.get_running_loop().create_task(
        db(events_emit_sync, thread_id=thread_id, run_id=run_id, events=events)
    )
    task.add_done_callback(_log_failure)


def _log_failure(task: asyncio.Task) -> None:
    if not task.cancelled() and task.exception() is not None:
        logger.error("Storing handed-over events failed", exc_info=task.exception())


def writer_channel(name: str) -> str:
    """The channel-layer channel a process executing runs as `name` listens on."""
    from django.conf import settings

    prefix = settings.CHANNEL_LAYERS["default"].get("CONFIG", {}).get("prefix", "")
    digest = hashlib.sha1(name.encode(), usedforsecurity=False).hexdigest()[:20]
    return f"{prefix}stream-writer.{digest}"


async def listening(name: str) -> None:
    """Listen on `writer_channel(name)` in this process (once), and return when the
    subscription is in place: a writer that finds nobody listening there takes the
    process for dead (events.events_emit_sync), so a run's sink waits for this before it
    reads `last_seq`."""
    from channels.layers import get_channel_layer

    layer = get_channel_layer()
    if layer is None or layer.__class__.__name__ == "InMemoryChannelLayer":
        return  # one process: other writers hand over directly
    loop = asyncio.get_running_loop()
    found = _listeners.get(name)
    if found is not None and not found[0].done() and not found[0].get_loop().is_closed():
        if found[0].get_loop() is loop:
            await asyncio.shield(found[1])
        return
    channel = writer_channel(name)
    ready: asyncio.Future = loop.create_future()
    _listeners[name] = (loop.create_task(_listen(layer, channel, ready)), ready)
    # The subscription is in place once a message sent to the channel comes back.
    for _ in range(100):
        await layer.send(channel, {"type": "stream.ready"})
        await asyncio.wait([ready], timeout=0.05)
        if ready.done():
            return
    logger.warning("Stream writer channel %s: no echo from Redis", channel)


async def _listen(layer: Any, channel: str, ready: asyncio.Future) -> None:
    while True:
        try:
            message = await layer.receive(channel)
        except asyncio.CancelledError:
            raise
        except Exception:  # noqa: BLE001 - Redis restarted: listen again
            logger.warning("Stream writer channel interrupted; listening again", exc_info=True)
            await asyncio.sleep(1)
            continue
        if message.get("type") == "stream.ready" and not ready.done():
            ready.set_result(None)
        elif message.get("type") == "stream.append":
            take(message["thread"], message.get("run"), message["events"])
