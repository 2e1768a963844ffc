from __future__ import annotations

from django.urls import path

from evals.consumers import SuiteRunProgressConsumer

websocket_urlpatterns: list = [
    path("ws/evals/<int:suite_run_id>/", SuiteRunProgressConsumer.as_asgi()),
]
