from __future__ import annotations

from django.urls import path

from frontend import views

app_name = "frontend"

urlpatterns = [
    path("", views.home, name="home"),
    path("agents/<slug:slug>/edit/", views.agent_edit, name="agent-edit"),
    path("chat/", views.chat, name="chat"),
    path("chat/t/<uuid:thread_id>/", views.chat, name="chat-thread"),
    path("chat/<slug:agent_slug>/", views.chat, name="chat-agent"),
]
