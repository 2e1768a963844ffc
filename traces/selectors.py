"""Reads of traces: a run's or a console tool run's trace, for its owner only."""

from __future__ import annotations

from typing import Any

from rest_framework.exceptions import NotFound

from agents_core.models import Run
from agents_core.selectors import run_for, runs_for
from tools_app.models import ToolRun
from traces.models import Span


def run_of_user(*, user: Any, run_id: Any) -> Run | None:
    """The run if it is in one of the user's threads."""
    return runs_for(user).select_related("agent").filter(pk=run_id).first()


def trace_id_of(run: Any) -> Any:
    """The trace a run belongs to: its root run's (a sub-agent's run is in its parent's)."""
    first = Span.objects.filter(run=run).values_list("trace_id", flat=True).first()
    return first or run.pk


def trace_spans(*, user: Any, run_id: Any) -> list[Span]:
    """Every span of the trace of `run_id`, in start order; NotFound (404) unless the run
    is in one of the user's threads."""
    run = run_for(user, run_id)
    return list(Span.objects.filter(trace_id=trace_id_of(run)).order_by("start", "id"))


def console_run_of_user(*, user: Any, tool_run_id: Any) -> ToolRun | None:
    """A tool run from the test console (REST, CLI) if the user started it; a chat's tool
    runs are in their agent run's trace."""
    return (
        ToolRun.objects.select_related("tool")
        .filter(pk=tool_run_id, created_by=user, tool_call__isnull=True)
        .first()
    )


def console_run_spans(*, user: Any, tool_run_id: Any) -> list[Span]:
    """The trace of a console tool run (its one span, once the run ended); NotFound (404)
    unless the user started the run."""
    if console_run_of_user(user=user, tool_run_id=tool_run_id) is None:
        raise NotFound("No such tool run.")
    return list(Span.objects.filter(trace_id=tool_run_id).order_by("start", "id"))


def span_data(span: Span) -> dict[str, Any]:
    return {
        "id": span.span_id,
        "traceId": str(span.trace_id),
        "parent": span.parent_id or None,
        "runId": str(span.run_id) if span.run_id else None,
        "toolRunId": str(span.tool_run_id) if span.tool_run_id else None,
        "kind": span.kind,
        "name": span.name,
        "start": span.start.isoformat(),
        "end": span.end.isoformat() if span.end else None,
        "durationMs": span.duration_ms,
        "status": span.status,
        "error": span.error,
        "attributes": span.attributes,
    }
