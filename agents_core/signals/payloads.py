"""JSON shapes of signals and inbox records, shared by the events and the REST API."""

from __future__ import annotations

from typing import Any

from agents_core.models import NotificationRecord, Signal


def _iso(value) -> str | None:  # noqa: ANN001
    return value.isoformat() if value else None


def signal_json(signal: Signal) -> dict[str, Any]:
    return {
        "id": signal.id,
        "threadId": str(signal.thread_id),
        "type": signal.type,
        "tagName": signal.tag_name,
        "contents": signal.contents,
        "attributes": signal.attributes,
        "metadata": signal.metadata,
        "state": {
            "id": signal.state_id,
            "mode": signal.state_mode,
            "cacheKey": signal.state_cache_key,
        }
        if signal.state_id
        else None,
        "notificationId": signal.notification_id,
        "decision": signal.decision,
        "status": signal.status,
        "runId": str(signal.run_id) if signal.run_id else None,
        "deliveredInRunId": str(signal.delivered_in_run_id) if signal.delivered_in_run_id else None,
        "createdAt": _iso(signal.created_at),
        "deliveredAt": _iso(signal.delivered_at),
    }


def notification_json(record: NotificationRecord) -> dict[str, Any]:
    return {
        "id": record.id,
        "threadId": str(record.thread_id),
        "source": record.source,
        "kind": record.kind,
        "summary": record.summary,
        "priority": record.priority,
        "payload": record.payload,
        "attributes": record.attributes,
        "metadata": record.metadata,
        "dedupeKey": record.dedupe_key,
        "coalesceKey": record.coalesce_key,
        "count": record.count,
        "status": record.status,
        "action": record.action,
        "dueAt": _iso(record.due_at),
        "attempts": record.attempts,
        "error": record.error,
        "createdAt": _iso(record.created_at),
        "deliveredAt": _iso(record.delivered_at),
    }
