from __future__ import annotations

from django.urls import path

from knowledge.consumers import KnowledgeProgressConsumer

websocket_urlpatterns: list = [
    path("ws/knowledge/<slug:slug>/", KnowledgeProgressConsumer.as_asgi()),
]
