"""Writes of traces that are not the recorder's: retention."""

from __future__ import annotations

from datetime import datetime, timedelta

from django.conf import settings
from django.utils import timezone

from traces.models import Span


def traces_delete_expired(*, now: datetime | None = None, batch: int | None = None) -> int:
    """Delete the traces whose root run started before the retention period; returns the
    spans deleted. A statement deletes at most `batch` spans; the spans under a root go
    first and the root last, so a pass cut short leaves every old trace findable by its
    root for the next one."""
    cutoff = (now or timezone.now()) - timedelta(days=settings.STUDIO_TRACE_RETENTION_DAYS)
    batch = batch or settings.STUDIO_TRACE_DELETE_BATCH
    old_roots = Span.objects.filter(parent_id="", start__lt=cutoff)
    deleted = 0
    for spans in (
        Span.objects.filter(trace_id__in=old_roots.values("trace_id")).exclude(parent_id=""),
        old_roots,
    ):
        while ids := list(spans.values_list("id", flat=True)[:batch]):
            deleted += Span.objects.filter(id__in=ids).delete()[0]
    return deleted
