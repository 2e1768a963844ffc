from __future__ import annotations

from django.urls import path

from frontend import views

app_name = "frontend"

urlpatterns = [
    path("", views.home, name="home"),
    path("agents/new/", views.agent_new, name="agent-new"),
    path("agents/<slug:slug>/edit/", views.agent_edit, name="agent-edit"),
    path("chat/", views.chat, name="chat"),
    path("chat/t/<uuid:thread_id>/", views.chat, name="chat-thread"),
    path("chat/<slug:agent_slug>/", views.chat, name="chat-agent"),
    path("tools/", views.tools, name="tools"),
    path("tools/new/", views.tools, {"view": "new"}, name="tool-new"),
    path("tools/<str:tool_name>/", views.tools, {"view": "detail"}, name="tool-detail"),
    path("tools/<str:tool_name>/edit/", views.tools, {"view": "edit"}, name="tool-edit"),
    path("sources/", views.sources, name="sources"),
    path("connectors/", views.connectors, name="connectors"),
    path("settings/", views.settings_page, name="settings"),
]
