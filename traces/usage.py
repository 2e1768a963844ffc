"""Reads over many traces: the runs list with each run's cost, tokens and duration, and
usage (tokens and cost per agent, model and day; error rate; latency percentiles).

Only the user's own runs count; a sub-agent's run is part of its parent's trace, not a row
of its own."""

from __future__ import annotations

from collections import defaultdict
from datetime import datetime, timedelta
from typing import Any

from django.db.models import (
    Count,
    DurationField,
    ExpressionWrapper,
    F,
    FloatField,
    OuterRef,
    Q,
    QuerySet,
    Subquery,
    Sum,
)
from django.db.models.fields.json import KT
from django.db.models.functions import Cast, Coalesce, TruncDate
from django.utils import timezone

from agents_core.models import Run
from agents_core.selectors import runs_for
from traces.models import Span, SpanKind


def _trace_sum(expression: Any) -> Subquery:
    """The sum of `expression` over the model spans of the run's trace."""
    spans = (
        Span.objects.filter(trace_id=OuterRef("pk"), kind=SpanKind.MODEL)
        .order_by()
        .values("trace_id")
        .annotate(total=Sum(expression))
        .values("total")[:1]
    )
    return Subquery(spans)


def _number(key: str) -> Cast:
    return Cast(KT(f"attributes__{key}"), FloatField())


def run_list(*, user: Any, filters: dict[str, Any]) -> QuerySet[Run]:
    """The user's top-level runs, newest first, with `cost_usd`, `tokens` and `duration`;
    filters: agent (slug), status, model, min_ms / max_ms, min_cost / max_cost, since /
    until (datetimes), q (the thread's title, the message, the agent's name, the error)."""
    runs = (
        runs_for(user)
        .exclude(thread__metadata__has_key="parentRunId")
        .select_related("agent", "thread")
        .annotate(
            cost_usd=_trace_sum(_number("cost_usd")),
            tokens=_trace_sum(
                Coalesce(_number("input_tokens"), 0.0) + Coalesce(_number("output_tokens"), 0.0)
            ),
            duration=ExpressionWrapper(
                F("finished_at") - F("created_at"), output_field=DurationField()
            ),
        )
        .order_by("-created_at")
    )
    exact = {"agent": "agent__slug", "status": "status", "model": "agent__model"}
    for key, field in exact.items():
        if filters.get(key):
            runs = runs.filter(**{field: filters[key]})
    if filters.get("min_ms") is not None:
        runs = runs.filter(duration__gte=timedelta(milliseconds=filters["min_ms"]))
    if filters.get("max_ms") is not None:
        runs = runs.filter(duration__lte=timedelta(milliseconds=filters["max_ms"]))
    if filters.get("min_cost") is not None:
        runs = runs.filter(cost_usd__gte=filters["min_cost"])
    if filters.get("max_cost") is not None:
        runs = runs.filter(cost_usd__lte=filters["max_cost"])
    if filters.get("since"):
        runs = runs.filter(created_at__gte=filters["since"])
    if filters.get("until"):
        runs = runs.filter(created_at__lt=filters["until"])
    if filters.get("q"):
        q = filters["q"]
        runs = runs.filter(
            Q(thread__title__icontains=q)
            | Q(state__message__icontains=q)
            | Q(agent__name__icontains=q)
            | Q(agent__slug__icontains=q)
            | Q(error__icontains=q)
        )
    return runs


def percentiles(values: list[float]) -> dict[str, float | None]:
    """p50, p95 and p99 by the nearest rank (None without values)."""
    ordered = sorted(values)

    def rank(p: int) -> float | None:
        if not ordered:
            return None
        return ordered[max(0, -(-p * len(ordered) // 100) - 1)]

    return {"p50": rank(50), "p95": rank(95), "p99": rank(99)}


def usage(*, user: Any, since: datetime, until: datetime | None = None) -> dict[str, Any]:
    """Tokens and cost per day, agent and model, runs and errors per day, and latency
    percentiles (runs, model calls, time to first token) between since and until."""
    until = until or timezone.now()
    spans = Span.objects.filter(run__in=runs_for(user), start__gte=since, start__lt=until)
    models = (
        spans.filter(kind=SpanKind.MODEL)
        .annotate(day=TruncDate("start"))
        .values("day", "run__agent__slug", "name")
        .annotate(
            calls=Count("id"),
            input_tokens=Sum(_number("input_tokens")),
            output_tokens=Sum(_number("output_tokens")),
            cost_usd=Sum(_number("cost_usd")),
        )
        .order_by("day", "run__agent__slug", "name")
    )
    rows = [
        {
            "day": row["day"].isoformat(),
            "agent": row["run__agent__slug"],
            "model": row["name"],
            "calls": row["calls"],
            "inputTokens": int(row["input_tokens"] or 0),
            "outputTokens": int(row["output_tokens"] or 0),
            "costUsd": row["cost_usd"] or 0.0,
        }
        for row in models
    ]
    runs = defaultdict(lambda: {"runs": 0, "errors": 0})
    run_ms: list[float] = []
    roots = spans.filter(kind=SpanKind.RUN, parent_id="").values_list("start", "end", "status")
    for start, end, status in roots:
        day = runs[start.date().isoformat()]
        day["runs"] += 1
        day["errors"] += status == "error"
        if end is not None and status != "suspended":
            run_ms.append((end - start).total_seconds() * 1000)
    calls = spans.filter(kind=SpanKind.MODEL, end__isnull=False).values_list(
        "start", "end", "attributes__time_to_first_token_ms"
    )
    call_ms = [(end - start).total_seconds() * 1000 for start, end, _ in calls]
    ttft = [float(value) for _, _, value in calls if value is not None]
    return {
        "since": since.isoformat(),
        "until": until.isoformat(),
        "usage": rows,
        "days": [
            {"day": day, **counts, "errorRate": counts["errors"] / counts["runs"]}
            for day, counts in sorted(runs.items())
        ],
        "latencyMs": {
            "run": percentiles(run_ms),
            "modelCall": percentiles(call_ms),
            "timeToFirstToken": percentiles(ttft),
        },
    }
