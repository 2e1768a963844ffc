from __future__ import annotations

from django.urls import path

from traces import api

urlpatterns = [
    path("runs/<uuid:run_id>/trace", api.RunTraceApi.as_view(), name="run-trace"),
    path(
        "tool-runs/<uuid:tool_run_id>/trace",
        api.ToolRunTraceApi.as_view(),
        name="tool-run-trace",
    ),
    path("traces/", api.TraceRunListApi.as_view(), name="trace-run-list"),
    path("usage/", api.UsageApi.as_view(), name="usage"),
]
