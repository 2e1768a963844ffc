from __future__ import annotations

from django.urls import path

from agents_core.consumers import ThreadConsumer

websocket_urlpatterns: list = [
    path("ws/threads/<uuid:thread_id>/", ThreadConsumer.as_asgi()),
]
