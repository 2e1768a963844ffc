"""Django admin for knowledge: bases and their documents (the content bytes are not shown)."""

from __future__ import annotations

from django.contrib import admin

from knowledge.models import Document, KnowledgeBase


@admin.register(KnowledgeBase)
class KnowledgeBaseAdmin(admin.ModelAdmin):
    list_display = ("slug", "name", "owner", "embedding_model", "created_at")
    list_filter = ("embedding_model",)
    search_fields = ("slug", "name", "owner__username")
    readonly_fields = ("embedding_model", "embedding_dim", "chunk_chars", "chunk_overlap")


@admin.register(Document)
class DocumentAdmin(admin.ModelAdmin):
    list_display = ("id", "kb", "kind", "format", "status", "chunk_count", "attempts", "updated_at")
    list_filter = ("status", "kind", "format")
    search_fields = ("title", "filename", "source_url")
    exclude = ("content",)
    readonly_fields = (
        "kb",
        "kind",
        "content_hash",
        "size",
        "pages",
        "chunk_count",
        "chunks_done",
        "chunks_embedded",
        "attempts",
        "heartbeat_at",
        "started_at",
        "finished_at",
        "crawl_root",
    )
