"""Signals into a thread: messages, typed signals and state channels, each delivered into
the running run, waking the thread, kept, queued or discarded as its sender chooses.

A thread is *active* while it has a run in status `running` (the Run table allows one per
thread, a partial unique constraint); otherwise it is idle. The moves of one signal and
the run loop's side of them are signals/delivery.py's.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from django.db import connection, transaction

from agents_core.models import (
    NotificationRecord,
    Signal,
    SignalStatus,
    SignalType,
    Thread,
)
from agents_core.services.runs import thread_active_run
from agents_core.signals import bridge
from agents_core.signals.delivery import (
    RACE_RETRIES,
    _deliver_into,
    _discard,
    _persist,
    _queue,
    _wake,
    signal_queue_process,
)
from agents_core.signals.payloads import notification_json, signal_json
from agents_core.signals.render import validate_attributes, validate_name
from common.exceptions import ApplicationError

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
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT pg_advisory_xact_lock(hashtext(%s))", [f"signals:{topic}:{thread_id}"]
        )


# --- reads used by the services ---------------------------------------------------------------
def _choice(value: str, allowed: tuple[str, ...], field: str) -> str:
    if value not in allowed:
        raise ApplicationError(
            f"{field} must be one of {', '.join(allowed)}; got {value!r}.",
            code="invalid_choice",
            extra={"errors": [{"path": f"$.{field}", "message": f"one of {allowed}"}]},
        )
    return value


def signal_dispatch(
    *, signal: Signal, if_active: str, if_idle: str, options: dict[str, Any] | None = None
) -> SendResult:
    """Apply the caller's choice for an active or an idle thread, safe against races."""
    # Kept for a signal the run ends without draining: it then goes as if idle.
    signal.metadata = {**signal.metadata, "ifIdle": if_idle}
    for _attempt in range(RACE_RETRIES):
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
