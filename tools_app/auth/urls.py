from __future__ import annotations

from django.urls import path

from tools_app.auth import views

urlpatterns = [
    path("tools/<str:name>/connect", views.connect, name="oauth-connect"),
    path("sources/<int:source_id>/connect", views.source_connect, name="oauth-source-connect"),
    path("callback", views.callback, name="oauth-callback"),
]
