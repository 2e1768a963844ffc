from __future__ import annotations

from django.urls import path

from providers import views

app_name = "providers"

urlpatterns = [path("", views.index, name="index")]
