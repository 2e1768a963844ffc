from __future__ import annotations

from django.urls import path

from tools_app.consumers import ToolRunConsumer

websocket_urlpatterns: list = [
    path("ws/tool-runs/", ToolRunConsumer.as_asgi()),
]
