from __future__ import annotations

from django.urls import path

from providers import api

urlpatterns = [
    path("providers/", api.CredentialListApi.as_view(), name="provider-list"),
    path(
        "providers/<int:credential_id>/", api.CredentialDetailApi.as_view(), name="provider-detail"
    ),
    path(
        "providers/<int:credential_id>/test", api.CredentialTestApi.as_view(), name="provider-test"
    ),
    path("models", api.ModelListApi.as_view(), name="model-list"),
]
