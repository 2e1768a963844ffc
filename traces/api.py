"""REST endpoints of traces: /api/runs/<id>/trace (a run's spans),
/api/tool-runs/<id>/trace (a console tool run's span), /api/traces/ (the runs
list with cost, tokens and duration, filtered and searched), /api/usage/ (tokens, cost,
errors and latency over days)."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from django.utils import timezone
from drf_spectacular.utils import extend_schema
from rest_framework import serializers
from rest_framework.pagination import LimitOffsetPagination
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from agents_core.models import RunStatus
from traces.selectors import console_run_spans, span_data, trace_spans
from traces.usage import run_list, usage

TAG = ["traces"]


class RunTraceApi(APIView):
    @extend_schema(tags=TAG)
    def get(self, request: Request, run_id: Any) -> Response:
        spans = trace_spans(user=request.user, run_id=run_id)
        return Response({"spans": [span_data(span) for span in spans]})


class ToolRunTraceApi(APIView):
    @extend_schema(tags=TAG)
    def get(self, request: Request, tool_run_id: Any) -> Response:
        spans = console_run_spans(user=request.user, tool_run_id=tool_run_id)
        return Response({"spans": [span_data(span) for span in spans]})


class RunListFilters(serializers.Serializer):
    agent = serializers.SlugField(required=False)
    status = serializers.ChoiceField(choices=RunStatus.choices, required=False)
    model = serializers.CharField(required=False, max_length=200)
    min_ms = serializers.FloatField(required=False, min_value=0)
    max_ms = serializers.FloatField(required=False, min_value=0)
    min_cost = serializers.FloatField(required=False, min_value=0)
    max_cost = serializers.FloatField(required=False, min_value=0)
    since = serializers.DateTimeField(required=False)
    until = serializers.DateTimeField(required=False)
    q = serializers.CharField(required=False, max_length=200)


def run_row(run: Any) -> dict[str, Any]:
    return {
        "id": str(run.pk),
        "threadId": str(run.thread_id),
        "title": run.thread.title,
        "agent": run.agent.slug,
        "agentName": run.agent.name,
        "model": run.agent.model,
        "status": run.status,
        "error": run.error,
        "createdAt": run.created_at.isoformat(),
        "durationMs": run.duration.total_seconds() * 1000 if run.duration else None,
        "tokens": int(run.tokens) if run.tokens is not None else None,
        "costUsd": run.cost_usd,
    }


class TraceRunListApi(APIView):
    @extend_schema(tags=TAG, parameters=[RunListFilters])
    def get(self, request: Request) -> Response:
        filters = RunListFilters(data=request.query_params)
        filters.is_valid(raise_exception=True)
        runs = run_list(user=request.user, filters=filters.validated_data)
        paginator = LimitOffsetPagination()
        page = paginator.paginate_queryset(runs, request, view=self)
        return paginator.get_paginated_response([run_row(run) for run in page])


class UsageFilters(serializers.Serializer):
    days = serializers.IntegerField(required=False, min_value=1, max_value=366, default=30)


class UsageApi(APIView):
    @extend_schema(tags=TAG, parameters=[UsageFilters])
    def get(self, request: Request) -> Response:
        filters = UsageFilters(data=request.query_params)
        filters.is_valid(raise_exception=True)
        since = timezone.now() - timedelta(days=filters.validated_data["days"])
        return Response(usage(user=request.user, since=since))
