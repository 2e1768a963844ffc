"""Traces (traces/): how long they are kept, and their export over OTLP."""

from __future__ import annotations

import os

from django.core.exceptions import ImproperlyConfigured

from common.env import envbool, envint
from studio.settings.services import CELERY_BEAT_SCHEDULE

# Runs record their spans (off: no spans; bench.traced compares the two).
STUDIO_TRACES = envbool("STUDIO_TRACES", True)
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
# OpenTelemetry export (traces/export.py): on when an OTLP endpoint is set in the standard
# variables (the SDK reads them, and its other OTEL_EXPORTER_OTLP_* ones); beat's job sends
# the spans closed since its last pass, up to a batch per pass.
STUDIO_TRACE_EXPORT = bool(
    os.environ.get("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT")
    or os.environ.get("OTEL_EXPORTER_OTLP_ENDPOINT")
)
STUDIO_TRACE_EXPORT_INTERVAL = envint("STUDIO_TRACE_EXPORT_INTERVAL", 10)
STUDIO_TRACE_EXPORT_BATCH = envint("STUDIO_TRACE_EXPORT_BATCH", 512)
if STUDIO_TRACE_EXPORT:
    CELERY_BEAT_SCHEDULE["traces-export"] = {
        "task": "traces.traces_export",
        "schedule": float(STUDIO_TRACE_EXPORT_INTERVAL),
    }
