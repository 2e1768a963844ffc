"""Websocket routes of every app, gathered in one list for studio/asgi.py."""

from __future__ import annotations

from agents_core.routing import websocket_urlpatterns as agents_ws
from evals.routing import websocket_urlpatterns as evals_ws
from knowledge.routing import websocket_urlpatterns as knowledge_ws
from tools_app.routing import websocket_urlpatterns as tools_ws

websocket_urlpatterns = [*agents_ws, *tools_ws, *knowledge_ws, *evals_ws]
