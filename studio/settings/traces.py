"""Traces (traces/): how long they are kept."""

from __future__ import annotations

from django.core.exceptions import ImproperlyConfigured

from studio.env import envint
from studio.settings.services import CELERY_BEAT_SCHEDULE

# Traces whose run started more than this many days ago are deleted by beat's job, this
# many spans per statement (a statement never holds a big table's locks for long).
STUDIO_TRACE_RETENTION_DAYS = envint("STUDIO_TRACE_RETENTION_DAYS", 30)
STUDIO_TRACE_DELETE_BATCH = envint("STUDIO_TRACE_DELETE_BATCH", 2000)
if STUDIO_TRACE_RETENTION_DAYS < 1 or STUDIO_TRACE_DELETE_BATCH < 1:
    raise ImproperlyConfigured(
        "STUDIO_TRACE_RETENTION_DAYS and STUDIO_TRACE_DELETE_BATCH must be at least 1."
    )
CELERY_BEAT_SCHEDULE["traces-retention"] = {
    "task": "traces.traces_delete_expired",
    "schedule": 3600.0,
}
