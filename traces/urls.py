from __future__ import annotations

from django.urls import path

from traces import api

urlpatterns = [
    path("runs/<uuid:run_id>/trace", api.RunTraceApi.as_view(), name="run-trace"),
]
