from __future__ import annotations

from django.urls import path

from tools_app.auth import views

urlpatterns = [
    path("tools/<str:name>/connect", views.connect, name="oauth-connect"),
    path("callback", views.callback, name="oauth-callback"),
]
