"""Delivering signals: the moves of one signal (into the running run, waking the thread,
kept in its memory, queued, discarded) and the run loop's side of them.

Delivery into a run is a pending Signal row that the run loop drains before its next model
call (`signals_drain_for_run`); whatever a run did not drain, and every queued signal, is
taken up when the run ends (`signals_on_run_end`), so no signal is left behind by a run
that finished between a sender's check and its write. Both are handed to the run loop
when the app is ready (runtime/run/plugins.py).
"""

from __future__ import annotations

from typing import Any

from django.db import IntegrityError, transaction
from django.utils import timezone

from agents_core.models import (
    Message,
    MessageRole,
    NotificationRecord,
    NotificationStatus,
    Run,
    RunStatus,
    Signal,
    SignalDecision,
    SignalStatus,
    SignalType,
    Thread,
)
from agents_core.services.runs import thread_active_run
from agents_core.signals import bridge
from agents_core.signals.payloads import signal_json
from agents_core.signals.render import render_tag
from agents_core.signals.waiting_sql import signals_waiting

# A run that ends between our "is it running" read and our write makes us look again.
RACE_RETRIES = 5


def signal_model_text(signal: Signal) -> str:
    """What the model sees: a plain message stays text unless it carries attributes."""
    if signal.type == SignalType.MESSAGE and not signal.attributes:
        return signal.contents
    return render_tag(signal.tag_name, signal.contents, signal.attributes)


# --- moves of one signal ------------------------------------------------------------------------
def _publish_signal(signal: Signal) -> None:
    bridge.publish(
        thread_id=signal.thread_id,
        run_id=signal.run_id,
        event={
            "type": "signal",
            "signal": signal_json(signal),
        },
    )


def _deliver_into(signal: Signal, run: Run) -> bool:
    """Make the signal pending for a run that is still running; False if it ended."""
    with transaction.atomic():
        # The lock orders us against the loop's final status update: either the run is
        # still running and its end hook will see this row, or we see it ended.
        # FOR NO KEY UPDATE: it conflicts with that update, not with the key-share locks
        # that rows referencing the run (its events, messages, spans) take as they are added.
        running = Run.objects.select_for_update(no_key=True).filter(
            id=run.id, status=RunStatus.RUNNING
        )
        if not running.exists():
            return False
        signal.run = run
        signal.decision = SignalDecision.DELIVER
        signal.status = SignalStatus.PENDING
        signal.save()
        _publish_signal(signal)
    return True


def _wake(signal: Signal, *, options: dict[str, Any] | None) -> Run | None:
    """Start a run with the signal as its first input; None if another run got there first."""
    fields = ("id", "decision", "status", "delivered_at", "run_id", "delivered_in_run_id")
    before = {name: getattr(signal, name) for name in fields}
    adding = signal._state.adding
    try:
        with transaction.atomic():
            signal.decision = SignalDecision.WAKE
            signal.status = SignalStatus.DELIVERED
            signal.delivered_at = timezone.now()
            signal.save()
            run = bridge.start_run(
                thread=signal.thread,
                text=signal_model_text(signal),
                user=signal.created_by,
                options=options or {},
                signal=signal,
            )
            signal.run = run
            signal.delivered_in_run = run
            signal.save(update_fields=["run", "delivered_in_run"])
            _mark_notification_delivered(signal)
            _publish_signal(signal)
    except IntegrityError:
        # Another process started a run on this thread a moment ago (the one-running-run
        # constraint refused ours): the caller delivers into that run instead. Our writes
        # were rolled back with the savepoint, so the instance goes back to how it was.
        for name, value in before.items():
            setattr(signal, name, value)
        signal._state.adding = adding
        return None
    return run


def _persist(signal: Signal) -> None:
    with transaction.atomic():
        signal.decision = SignalDecision.PERSIST
        signal.status = SignalStatus.PERSISTED
        signal.save()
        _write_transcript(signal, run=None)
        _mark_notification_delivered(signal)
        _publish_signal(signal)


def _discard(signal: Signal) -> None:
    signal.decision = SignalDecision.DISCARD
    signal.status = SignalStatus.DISCARDED
    signal.save()
    _publish_signal(signal)


def _queue(signal: Signal) -> None:
    signal.decision = SignalDecision.QUEUE
    signal.status = SignalStatus.QUEUED
    signal.save()
    _publish_signal(signal)


def _write_transcript(signal: Signal, *, run: Run | None) -> None:
    """The thread's memory keeps the signal so later runs see it (role `signal`)."""
    Message.objects.create(
        thread_id=signal.thread_id,
        run=run,
        role=MessageRole.SIGNAL,
        parts=[bridge.signal_part(signal, signal_model_text(signal))],
    )


def _mark_notification_delivered(signal: Signal) -> None:
    if signal.notification_id is None or signal.metadata.get("delivery") == "summary":
        return
    NotificationRecord.objects.filter(id=signal.notification_id).exclude(
        status=NotificationStatus.DIGESTED
    ).update(status=NotificationStatus.DELIVERED, delivered_at=timezone.now())


# --- the run loop's side ------------------------------------------------------------------------
def signals_drain_for_run(run: Run) -> list[str]:
    """Pending signals for this run, marked delivered and written to the thread's memory
    (role `signal`), returned rendered for the model.

    The run loop calls this before each model call and reads the thread's memory after
    it, so each drained signal reaches the model once, in order (a caller that builds
    its messages itself appends the returned strings as user messages instead).
    """
    if not signals_waiting(run, thread_queue=False):
        return []  # the common case, in one query instead of a locking transaction
    now = timezone.now()
    with transaction.atomic():
        # Only the signal rows are locked (`of`): locking the joined thread row too would
        # skip every signal while anything else holds that row (the event store numbering
        # the thread's events does, all the time a run streams), and they would wait for
        # the run's end instead of reaching its next model call.
        signals = list(
            Signal.objects.select_for_update(skip_locked=True, of=("self",), no_key=True)
            .filter(run=run, status=SignalStatus.PENDING)
            .select_related("thread")
            .order_by("id")
        )
        for signal in signals:
            signal.status = SignalStatus.DELIVERED
            signal.delivered_in_run = run
            signal.delivered_at = now
            signal.save(update_fields=["status", "delivered_in_run", "delivered_at"])
            _write_transcript(signal, run=run)
            _mark_notification_delivered(signal)
            _publish_signal(signal)
    return [signal_model_text(signal) for signal in signals]


def signals_on_run_end(run: Run) -> Run | None:
    """Called once a run's final status is saved: what it did not drain, and the queue,
    start the next run (one queued signal per run, oldest first). Returns that run."""
    if not signals_waiting(run, thread_queue=True):
        return None  # nothing left, nothing queued: one query for the common case
    leftovers = Signal.objects.filter(run=run, status=SignalStatus.PENDING).order_by("id")
    for signal in leftovers.select_related("thread"):
        if signal.metadata.get("delivery") == "summary":
            # A summary the run never saw is moot: the full notification is queued behind it.
            _discard(signal)
        elif signal.metadata.get("ifIdle") == "persist":
            _persist(signal)
        elif signal.metadata.get("ifIdle") == "discard":
            _discard(signal)
        else:
            _queue(signal)
    return signal_queue_process(thread=run.thread)


def signal_queue_process(*, thread: Thread) -> Run | None:
    """If the thread is idle, the oldest queued signal wakes it."""
    for _attempt in range(RACE_RETRIES):
        if thread_active_run(thread=thread) is not None:
            return None
        last = Run.objects.filter(thread=thread).order_by("-created_at").first()
        if last is not None and last.status == RunStatus.SUSPENDED:
            # The suspended run is waiting for a human; its resume comes first.
            return None
        with transaction.atomic():
            signal = (
                Signal.objects.select_for_update(skip_locked=True, no_key=True)
                .filter(thread=thread, status=SignalStatus.QUEUED)
                .order_by("id")
                .first()
            )
            if signal is None:
                return None
            run = _wake(signal, options=signal.metadata.get("streamOptions"))
        if run is not None:
            return run
    return None
