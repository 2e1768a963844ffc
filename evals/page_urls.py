from __future__ import annotations

from django.urls import path

from evals import views

app_name = "evals"

urlpatterns = [
    path("", views.index, name="index"),
    path("runs/<int:suite_run_id>/", views.run_detail, name="run"),
    path("compare/", views.compare, name="compare"),
]
