from __future__ import annotations

from django.urls import path

from knowledge import api

urlpatterns = [
    path("knowledge/", api.KnowledgeBaseListApi.as_view(), name="knowledge-list"),
    path("knowledge/<slug:slug>/", api.KnowledgeBaseDetailApi.as_view(), name="knowledge-detail"),
    path(
        "knowledge/<slug:slug>/documents/",
        api.DocumentListApi.as_view(),
        name="knowledge-document-list",
    ),
    path(
        "knowledge/<slug:slug>/documents/<int:document_id>/",
        api.DocumentDetailApi.as_view(),
        name="knowledge-document-detail",
    ),
    path(
        "knowledge/<slug:slug>/documents/<int:document_id>/reindex",
        api.DocumentReindexApi.as_view(),
        name="knowledge-document-reindex",
    ),
    path(
        "knowledge/<slug:slug>/documents/<int:document_id>/chunks/",
        api.DocumentChunksApi.as_view(),
        name="knowledge-document-chunks",
    ),
    path("knowledge/<slug:slug>/search", api.KnowledgeSearchApi.as_view(), name="knowledge-search"),
    path(
        "knowledge/<slug:slug>/progress",
        api.KnowledgeProgressApi.as_view(),
        name="knowledge-progress",
    ),
    path("knowledge/<slug:slug>/cancel", api.KnowledgeCancelApi.as_view(), name="knowledge-cancel"),
    path("knowledge/<slug:slug>/tool", api.KnowledgeToolCreateApi.as_view(), name="knowledge-tool"),
]
