"""Notifications: the inbox record (a pending duplicate merged, related ones combined) and
the policy's delivery, in one transaction under the thread's inbox lock."""

from __future__ import annotations

import json
from datetime import timedelta
from typing import Any

from django.conf import settings
from django.db import DatabaseError, transaction
from django.db.models import F
from django.utils import timezone

from agents_core.models import (
    NotificationRecord,
    NotificationStatus,
    Signal,
    SignalType,
    Thread,
)
from agents_core.models.signals import PRIORITY_RANK
from agents_core.services.runs import thread_active_run
from agents_core.signals import bridge
from agents_core.signals.delivery import _queue
from agents_core.signals.payloads import notification_json
from agents_core.signals.policy import PRIORITIES, PolicyError, policy_decide
from agents_core.signals.render import validate_attributes
from agents_core.signals.services import (
    SendResult,
    _new_signal,
    signal_dispatch,
    thread_lock,
)
from common.exceptions import ApplicationError

# What may go wrong delivering a notification (a policy function, starting a run, the
# database); anything else is a bug and propagates.
DELIVERY_ERRORS = (PolicyError, ApplicationError, DatabaseError)
# How many coalesced summaries a record keeps (the count keeps going).
COALESCED_KEPT = 20


def notification_publish(record: NotificationRecord, *, decision: str) -> None:
    bridge.publish(
        thread_id=record.thread_id,
        run_id=None,
        event={
            "type": "notification",
            "decision": decision,
            "notification": notification_json(record),
        },
    )


def _full_contents(record: NotificationRecord) -> str:
    if not record.payload:
        return record.summary
    payload = json.dumps(record.payload, ensure_ascii=False, sort_keys=True)
    return f"{record.summary}\n{payload}"


def notification_signal(record: NotificationRecord, *, summary_only: bool = False) -> Signal:
    attributes = {
        **record.attributes,
        "source": record.source,
        "kind": record.kind or None,
        "priority": record.priority,
        "count": record.count if record.count > 1 else None,
    }
    if summary_only:
        attributes["delivery"] = "summary"
    return _new_signal(
        thread=record.thread,
        type=SignalType.NOTIFICATION,
        tag_name="notification",
        contents=record.summary if summary_only else _full_contents(record),
        attributes={k: v for k, v in attributes.items() if v is not None},
        metadata={**record.metadata, "delivery": "summary" if summary_only else "full"},
        user=record.created_by,
        notification=record,
    )


def _merge(
    record: NotificationRecord,
    *,
    summary,
    kind,
    priority,
    payload,
    attributes,
    metadata,
    coalesce: bool,
) -> None:  # noqa: ANN001
    if coalesce:
        record.count += 1
        kept = record.metadata.get("coalesced", [record.summary])
        record.metadata = {
            **record.metadata,
            **(metadata or {}),
            "coalesced": [*kept, summary][-COALESCED_KEPT:],
        }
    else:
        record.metadata = {**record.metadata, **(metadata or {})}
    record.summary = summary
    record.kind = kind or record.kind
    record.payload = payload if payload is not None else record.payload
    record.attributes = {**record.attributes, **attributes}
    if PRIORITY_RANK[priority] > PRIORITY_RANK[record.priority]:
        record.priority = priority


def _pending_match(thread: Thread, **key: str) -> NotificationRecord | None:
    return (
        NotificationRecord.objects.select_for_update()
        .filter(thread=thread, status=NotificationStatus.PENDING, action="digest", **key)
        .order_by("id")
        .first()
    )


def _merge_or_create(
    thread: Thread,
    *,
    source: str,
    dedupe_key: str,
    coalesce_key: str,
    user,
    **fields: Any,  # noqa: ANN001
) -> tuple[NotificationRecord, str]:
    """The pending record this notification merges into (locked), or a new one."""
    if dedupe_key and (record := _pending_match(thread, source=source, dedupe_key=dedupe_key)):
        _merge(record, coalesce=False, **fields)
        return record, "dedupe"
    if coalesce_key and (record := _pending_match(thread, coalesce_key=coalesce_key)):
        _merge(record, coalesce=True, **fields)
        return record, "coalesce"
    payload, metadata = fields["payload"], fields["metadata"]
    record = NotificationRecord(
        thread=thread,
        source=source,
        kind=fields["kind"],
        summary=fields["summary"],
        priority=fields["priority"],
        payload=payload if payload is not None else {},
        attributes=fields["attributes"],
        metadata=dict(metadata or {}),
        dedupe_key=dedupe_key or "",
        coalesce_key=coalesce_key or "",
        created_by=user,
    )
    return record, ""


def send_notification_signal(
    *,
    thread: Thread,
    source: str,
    summary: str,
    kind: str = "",
    priority: str = "medium",
    payload: Any = None,
    dedupe_key: str = "",
    coalesce_key: str = "",
    attributes: dict[str, Any] | None = None,
    metadata: dict[str, Any] | None = None,
    user=None,  # noqa: ANN001
) -> SendResult:
    """Record the notification in the inbox, merge it, then deliver it by the policy."""
    if priority not in PRIORITIES:
        raise ApplicationError(
            f"priority must be one of {', '.join(PRIORITIES)}; got {priority!r}.",
            code="invalid_choice",
            extra={"errors": [{"path": "$.priority", "message": f"one of {PRIORITIES}"}]},
        )
    if not isinstance(source, str) or not source.strip():
        raise ApplicationError("source is required.", code="required")
    if not isinstance(summary, str) or not summary.strip():
        raise ApplicationError("summary is required.", code="required")
    attributes = validate_attributes(attributes)
    fields = dict(
        summary=summary,
        kind=kind or "",
        priority=priority,
        payload=payload,
        attributes=attributes,
        metadata=metadata,
    )
    # One transaction under the thread's inbox lock, the lock a digest takes before it
    # claims: the merge and the policy decision see the record in one state, so a digest
    # delivers it either before the merge looks for a pending match (the merge then makes
    # a new record) or after the decision is committed, never in between.
    with transaction.atomic():
        thread_lock(thread.id, "inbox")
        record, merged = _merge_or_create(
            thread,
            source=source,
            dedupe_key=dedupe_key,
            coalesce_key=coalesce_key,
            user=user,
            **fields,
        )
        record.save()
        # A savepoint: a delivery that fails rolls back alone and the record stays in the
        # inbox for the digest job (which retries a bounded number of times), never lost.
        try:
            with transaction.atomic():
                result = notification_apply_policy(record)
        except DELIVERY_ERRORS as exc:
            result = _defer_to_digest(record, exc)
    result.merged = merged
    record.refresh_from_db()
    result.notification = record
    return result


def _defer_to_digest(record: NotificationRecord, exc: Exception) -> SendResult:
    message = f"{type(exc).__name__}: {exc}"[:2000]
    NotificationRecord.objects.filter(id=record.id).update(
        action="digest",
        status=NotificationStatus.PENDING,
        due_at=timezone.now(),
        attempts=F("attempts") + 1,
        error=message,
        updated_at=timezone.now(),
    )
    record.refresh_from_db()
    notification_publish(record, decision="digest")
    return SendResult(
        "digest",
        notification=record,
        reason=f"Immediate delivery failed ({message}); the digest will retry it.",
    )


def notification_apply_policy(record: NotificationRecord) -> SendResult:
    """Decide with the agent's policy and act; the record is saved and locked by the caller."""
    thread = record.thread
    active = thread_active_run(thread=thread) is not None
    notification = {
        "source": record.source,
        "kind": record.kind,
        "priority": record.priority,
        "summary": record.summary,
        "payload": record.payload,
        "count": record.count,
        "attributes": record.attributes,
    }
    action = policy_decide(agent=thread.agent, notification=notification, active=active)
    record.action = action
    if action == "digest":
        delay = timedelta(seconds=settings.STUDIO_DIGEST_DELAY)
        record.status = NotificationStatus.PENDING
        record.due_at = record.due_at or timezone.now() + delay
        record.save(update_fields=["action", "status", "due_at", "updated_at"])
        notification_publish(record, decision="digest")
        return SendResult("digest", notification=record)
    record.due_at = None
    record.save(update_fields=["action", "due_at", "updated_at"])
    if action == "summary":
        summary = notification_signal(record, summary_only=True)
        result = signal_dispatch(signal=summary, if_active="deliver", if_idle="wake")
        full = notification_signal(record)
        full.metadata["streamOptions"] = {}
        _queue(full)
        record.status = NotificationStatus.SUMMARIZED
        record.save(update_fields=["status", "updated_at"])
        notification_publish(record, decision="summary")
        return SendResult("summary", summary, result.run_id, reason="Full delivery when idle.")
    signal = notification_signal(record)
    if_idle = "persist" if action == "persist" else "wake"
    if_active = "persist" if action == "persist" else "deliver"
    result = signal_dispatch(signal=signal, if_active=if_active, if_idle=if_idle)
    record.refresh_from_db()
    notification_publish(record, decision=result.decision)
    return result
