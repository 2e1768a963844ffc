"""Reads of signals and the inbox."""

from __future__ import annotations

from typing import Any

from django.db.models import Count, QuerySet, Sum

from agents_core.models import NotificationRecord, NotificationStatus, Signal, Thread


def signal_list(*, thread: Thread) -> QuerySet[Signal]:
    return Signal.objects.filter(thread=thread).order_by("id")


def notification_list(*, thread: Thread, status: str | None = None) -> QuerySet[NotificationRecord]:
    records = NotificationRecord.objects.filter(thread=thread).order_by("-id")
    return records.filter(status=status) if status else records


def inbox_counts(*, thread: Thread) -> dict[str, Any]:
    """Records and the notifications they stand for (coalesced ones count), per status."""
    rows = (
        NotificationRecord.objects.filter(thread=thread)
        .values("status")
        .annotate(records=Count("id"), notifications=Sum("count"))
    )
    counts = {status: {"records": 0, "notifications": 0} for status in NotificationStatus.values}
    for row in rows:
        counts[row["status"]] = {"records": row["records"], "notifications": row["notifications"]}
    return counts
