"""Signals into a thread: deliver into the running run, wake, persist, queue or discard.

A thread is *active* while it has a run in status `running` (the Run table allows one per
thread, a partial unique constraint); otherwise it is idle. Delivery into a run is a
pending Signal row that the run loop drains before its next model call
(`signals_drain_for_run`); whatever a run did not drain, and every queued signal, is taken
up when the run ends (`signals_on_run_end`), so no signal is left behind by a run that
finished between our check and our write.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from django.db import IntegrityError, connection, transaction
from django.db.models import Q
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
from agents_core.signals import bridge
from agents_core.signals.payloads import notification_json, signal_json
from agents_core.signals.render import render_tag, validate_attributes, validate_name
from studio.exceptions import ApplicationError

IF_ACTIVE = ("deliver", "persist", "discard", "queue")
IF_IDLE = ("wake", "persist", "discard")
SIGNAL_TYPES = ("user", "state", "reactive", "notification")
# What an idle/active thread does with a signal of a type unless the caller says.
TYPE_DEFAULTS = {
    "user": ("deliver", "wake"),
    "reactive": ("deliver", "wake"),
    "state": ("deliver", "persist"),
    "notification": ("deliver", "persist"),
}
# A run that ends between our "is it running" read and our write makes us look again.
_RACE_RETRIES = 5


@dataclass
class SendResult:
    decision: str
    signal: Signal | None = None
    run_id: Any = None
    notification: NotificationRecord | None = None
    reason: str = ""
    merged: str = ""

    def as_dict(self) -> dict[str, Any]:
        return {
            "decision": self.decision,
            "runId": str(self.run_id) if self.run_id else None,
            "signalId": self.signal.id if self.signal else None,
            "signal": signal_json(self.signal) if self.signal else None,
            "notification": notification_json(self.notification) if self.notification else None,
            "reason": self.reason,
            "merged": self.merged or None,
        }


def thread_lock(thread_id: Any, topic: str) -> None:
    """Serialize one kind of write on a thread (state checks, inbox merges, digests) for
    the rest of the caller's transaction.

    An advisory lock rather than the Thread row: the run loop updates that row for every
    event it publishes, and holding it here could deadlock against a run's last update.
    """
    if connection.vendor == "postgresql":
        with connection.cursor() as cursor:
            cursor.execute(
                "SELECT pg_advisory_xact_lock(hashtext(%s))", [f"signals:{topic}:{thread_id}"]
            )


# --- reads used by the services ---------------------------------------------------------------
def thread_active_run(*, thread: Thread) -> Run | None:
    return Run.objects.filter(thread=thread, status=RunStatus.RUNNING).first()


def signal_model_text(signal: Signal) -> str:
    """What the model sees: a plain message stays text unless it carries attributes."""
    if signal.type == SignalType.MESSAGE and not signal.attributes:
        return signal.contents
    return render_tag(signal.tag_name, signal.contents, signal.attributes)


def _choice(value: str, allowed: tuple[str, ...], field: str) -> str:
    if value not in allowed:
        raise ApplicationError(
            f"{field} must be one of {', '.join(allowed)}; got {value!r}.",
            code="invalid_choice",
            extra={"errors": [{"path": f"$.{field}", "message": f"one of {allowed}"}]},
        )
    return value


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
        if not Run.objects.select_for_update().filter(id=run.id, status=RunStatus.RUNNING).exists():
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


def signal_dispatch(
    *, signal: Signal, if_active: str, if_idle: str, options: dict[str, Any] | None = None
) -> SendResult:
    """Apply the caller's choice for an active or an idle thread, safe against races."""
    # Kept for a signal the run ends without draining: it then goes as if idle.
    signal.metadata = {**signal.metadata, "ifIdle": if_idle}
    for _attempt in range(_RACE_RETRIES):
        run = thread_active_run(thread=signal.thread)
        if run is not None:
            if if_active == "deliver":
                if _deliver_into(signal, run):
                    return SendResult("deliver", signal, run.id)
                continue
            if if_active == "queue":
                if options:
                    # The run this signal starts later takes the caller's options.
                    signal.metadata = {**signal.metadata, "streamOptions": options}
                _queue(signal)
                # The run may have ended before the row was written: take the queue up.
                signal_queue_process(thread=signal.thread)
                signal.refresh_from_db()
                return SendResult("queue", signal, signal.delivered_in_run_id or run.id)
        elif if_idle == "wake":
            started = _wake(signal, options=options)
            if started is not None:
                return SendResult("wake", signal, started.id)
            continue
        action = if_active if run is not None else if_idle
        if action == "persist":
            _persist(signal)
            return SendResult("persist", signal)
        _discard(signal)
        return SendResult("discard", signal)
    raise ApplicationError(
        "The thread kept starting and ending runs; the signal was not sent. Try again.",
        status_code=409,
        code="busy",
    )


def _new_signal(
    *,
    thread: Thread,
    type: str,  # noqa: A002
    tag_name: str,
    contents: Any,
    attributes: dict[str, Any] | None,
    metadata: dict[str, Any] | None,
    user=None,  # noqa: ANN001
    **fields: Any,
) -> Signal:
    if contents is not None and not isinstance(contents, str):
        contents = json.dumps(contents, ensure_ascii=False, sort_keys=True)
    if metadata is not None and not isinstance(metadata, dict):
        raise ApplicationError("metadata must be an object.", code="invalid")
    return Signal(
        thread=thread,
        type=type,
        tag_name=validate_name(tag_name, what="Tag name"),
        contents=contents or "",
        attributes=validate_attributes(attributes),
        metadata=dict(metadata or {}),
        created_by=user,
        **fields,
    )


# --- the public services ------------------------------------------------------------------------
def send_message(
    *,
    thread: Thread,
    message: str,
    user=None,  # noqa: ANN001
    if_active: str = "deliver",
    if_idle: str = "wake",
    stream_options: dict[str, Any] | None = None,
    attributes: dict[str, Any] | None = None,
) -> SendResult:
    """A user message: into the running run before its next model call, or wake the thread."""
    if not isinstance(message, str) or not message.strip():
        raise ApplicationError("message must be a non-empty string.", code="required")
    if stream_options:  # a run this message starts, now or once queued, takes them
        bridge.check_run_options(thread=thread, options=stream_options)
    signal = _new_signal(
        thread=thread,
        type=SignalType.MESSAGE,
        tag_name="message",
        contents=message,
        attributes=attributes,
        metadata=None,
        user=user,
    )
    return signal_dispatch(
        signal=signal,
        if_active=_choice(if_active, IF_ACTIVE, "ifActive"),
        if_idle=_choice(if_idle, IF_IDLE, "ifIdle"),
        options=stream_options,
    )


def queue_message(
    *,
    thread: Thread,
    message: str,
    user=None,  # noqa: ANN001
    stream_options: dict[str, Any] | None = None,
    attributes: dict[str, Any] | None = None,
) -> SendResult:
    """A message for the next turn: it starts a run after the active one ends (FIFO)."""
    return (
        send_message(
            thread=thread,
            message=message,
            user=user,
            if_active="queue",
            if_idle="wake",
            stream_options=stream_options,
            attributes=attributes,
        )
        if not Signal.objects.filter(thread=thread, status=SignalStatus.QUEUED).exists()
        else (_queue_behind(thread=thread, message=message, user=user, attributes=attributes))
    )


def _queue_behind(*, thread: Thread, message: str, user, attributes) -> SendResult:  # noqa: ANN001
    """Others are already waiting: this one goes to the back of the line."""
    signal = _new_signal(
        thread=thread,
        type=SignalType.MESSAGE,
        tag_name="message",
        contents=message,
        attributes=attributes,
        metadata=None,
        user=user,
    )
    _queue(signal)
    signal_queue_process(thread=thread)
    signal.refresh_from_db()
    return SendResult(signal.decision, signal, signal.delivered_in_run_id)


def send_signal(
    *,
    thread: Thread,
    type: str,  # noqa: A002 - the name the API uses
    contents: Any = "",
    tag_name: str | None = None,
    attributes: dict[str, Any] | None = None,
    metadata: dict[str, Any] | None = None,
    user=None,  # noqa: ANN001
    if_active: str | None = None,
    if_idle: str | None = None,
) -> SendResult:
    """A typed signal the model sees as `<tag_name ...attributes>contents</tag_name>`."""
    if type not in SIGNAL_TYPES:
        raise ApplicationError(
            f"Unknown signal type {type!r}: use one of {', '.join(SIGNAL_TYPES)}.",
            code="unknown_signal_type",
            extra={"errors": [{"path": "$.type", "message": f"one of {SIGNAL_TYPES}"}]},
        )
    default_active, default_idle = TYPE_DEFAULTS[type]
    signal = _new_signal(
        thread=thread,
        type=type,
        tag_name=tag_name or type,
        contents=contents,
        attributes=attributes,
        metadata=metadata,
        user=user,
    )
    return signal_dispatch(
        signal=signal,
        if_active=_choice(if_active or default_active, IF_ACTIVE, "ifActive"),
        if_idle=_choice(if_idle or default_idle, IF_IDLE, "ifIdle"),
    )


def state_in_force(*, thread: Thread, state_id: str) -> Signal | None:
    return (
        Signal.objects.filter(thread=thread, type=SignalType.STATE, state_id=state_id)
        .exclude(status=SignalStatus.DISCARDED)
        .order_by("-id")
        .first()
    )


def send_state_signal(
    *,
    thread: Thread,
    id: str,  # noqa: A002 - the channel id, as the API names it
    mode: str = "snapshot",
    cache_key: str = "",
    contents: Any = None,
    value: Any = None,
    delta: Any = None,
    attributes: dict[str, Any] | None = None,
    metadata: dict[str, Any] | None = None,
    user=None,  # noqa: ANN001
    if_active: str = "deliver",
    if_idle: str = "persist",
) -> SendResult:
    """A state channel's snapshot or delta; an unchanged state (same cache key) is skipped."""
    if not isinstance(id, str) or not id.strip():
        raise ApplicationError("id (the state channel) is required.", code="required")
    _choice(mode, ("snapshot", "delta"), "mode")
    body = contents if contents is not None else (value if mode == "snapshot" else delta)
    if body is None:
        needed = "value" if mode == "snapshot" else "delta"
        raise ApplicationError(f"A {mode} needs contents or {needed}.", code="required")
    cache_key = str(cache_key or "")
    with transaction.atomic():
        # One state write per thread at a time, so two equal snapshots cannot both pass.
        thread_lock(thread.id, "state")
        current = state_in_force(thread=thread, state_id=id)
        if (
            cache_key
            and current is not None
            and (current.state_mode, current.state_cache_key) == (mode, cache_key)
        ):
            return SendResult(
                "skip",
                current,
                current.delivered_in_run_id or current.run_id,
                reason=f"State {id!r} is unchanged (cache key {cache_key!r} is in force).",
            )
        signal = _new_signal(
            thread=thread,
            type=SignalType.STATE,
            tag_name="state",
            contents=body,
            attributes={**validate_attributes(attributes), "id": id, "mode": mode},
            metadata=metadata,
            user=user,
            state_id=id,
            state_mode=mode,
            state_cache_key=cache_key,
        )
        return signal_dispatch(
            signal=signal,
            if_active=_choice(if_active, IF_ACTIVE, "ifActive"),
            if_idle=_choice(if_idle, IF_IDLE, "ifIdle"),
        )


# --- the run loop's side ------------------------------------------------------------------------
def signals_drain_for_run(run: Run) -> list[str]:
    """Pending signals for this run, marked delivered and written to the thread's memory
    (role `signal`), returned rendered for the model.

    The run loop calls this before each model call and reads the thread's memory after
    it, so each drained signal reaches the model once, in order (a caller that builds
    its messages itself appends the returned strings as user messages instead).
    """
    if not Signal.objects.filter(run=run, status=SignalStatus.PENDING).exists():
        return []  # the common case, in one query instead of a locking transaction
    now = timezone.now()
    with transaction.atomic():
        signals = list(
            Signal.objects.select_for_update(skip_locked=True)
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
    if not Signal.objects.filter(
        Q(run=run, status=SignalStatus.PENDING)
        | Q(thread_id=run.thread_id, status=SignalStatus.QUEUED)
    ).exists():
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
    for _attempt in range(_RACE_RETRIES):
        if thread_active_run(thread=thread) is not None:
            return None
        last = Run.objects.filter(thread=thread).order_by("-created_at").first()
        if last is not None and last.status == RunStatus.SUSPENDED:
            # The suspended run is waiting for a human; its resume comes first.
            return None
        with transaction.atomic():
            signal = (
                Signal.objects.select_for_update(skip_locked=True)
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
