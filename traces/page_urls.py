from __future__ import annotations

from django.urls import path

from traces import views

app_name = "traces"

urlpatterns = [
    path("", views.runs, name="runs"),
    path("<uuid:run_id>/", views.trace, name="trace"),
    path("tool-runs/<uuid:tool_run_id>/", views.tool_run_trace, name="tool-run-trace"),
]
