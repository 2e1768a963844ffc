from __future__ import annotations

from django.urls import path

from knowledge import views

app_name = "knowledge"

urlpatterns = [
    path("", views.index, name="index"),
    path("<slug:slug>/", views.detail, name="detail"),
    path("<slug:slug>/documents/<int:document_id>/", views.document, name="document"),
]
