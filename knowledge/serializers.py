"""Shapes of the knowledge API, and of the documents in progress events."""

from __future__ import annotations

from rest_framework import serializers

from knowledge.models import Document, KnowledgeBase


class KnowledgeBaseInputSerializer(serializers.Serializer):
    name = serializers.CharField(max_length=200)
    slug = serializers.CharField(max_length=64, required=False, allow_blank=True, default="")
    description = serializers.CharField(required=False, allow_blank=True, default="")
    embedding_model = serializers.CharField(
        required=False,
        allow_blank=True,
        allow_null=True,
        default=None,
        help_text='An embedding model the studio offers (GET /api/knowledge/ lists them); "" '
        "for full-text search only; omitted: the studio's default.",
    )


class KnowledgeBaseUpdateSerializer(serializers.Serializer):
    name = serializers.CharField(max_length=200, required=False)
    description = serializers.CharField(required=False, allow_blank=True)


class KnowledgeBaseOutputSerializer(serializers.ModelSerializer):
    search_mode = serializers.SerializerMethodField()
    documents = serializers.SerializerMethodField()

    class Meta:
        model = KnowledgeBase
        fields = [
            "slug",
            "name",
            "description",
            "embedding_model",
            "embedding_dim",
            "search_mode",
            "chunk_chars",
            "chunk_overlap",
            "documents",
            "created_at",
            "updated_at",
        ]
        read_only_fields = fields

    def get_search_mode(self, kb: KnowledgeBase) -> str:
        return "hybrid" if kb.has_vectors else "fts"

    def get_documents(self, kb: KnowledgeBase) -> int:
        count = getattr(kb, "document_count", None)
        return count if count is not None else kb.documents.count()


class DocumentOutputSerializer(serializers.ModelSerializer):
    name = serializers.CharField(source="display_name", read_only=True)
    viewer_url = serializers.SerializerMethodField()

    class Meta:
        model = Document
        fields = [
            "id",
            "kind",
            "name",
            "title",
            "filename",
            "source_url",
            "format",
            "size",
            "pages",
            "status",
            "error",
            "chunk_count",
            "chunks_done",
            "chunks_embedded",
            "attempts",
            "crawl_root",
            "crawl_depth",
            "crawl_max_pages",
            "viewer_url",
            "started_at",
            "finished_at",
            "created_at",
            "updated_at",
        ]
        read_only_fields = fields

    def get_viewer_url(self, document: Document) -> str:
        return f"/knowledge/{document.kb.slug}/documents/{document.id}/"


class UrlDocumentInputSerializer(serializers.Serializer):
    url = serializers.CharField(max_length=2000)
    depth = serializers.IntegerField(min_value=0, required=False, default=0)
    max_pages = serializers.IntegerField(min_value=1, required=False, default=None)


class TextDocumentInputSerializer(serializers.Serializer):
    text = serializers.CharField(trim_whitespace=False)
    title = serializers.CharField(max_length=500, required=False, allow_blank=True, default="")


class SearchFiltersSerializer(serializers.Serializer):
    documents = serializers.ListField(child=serializers.IntegerField(), required=False)
    kinds = serializers.ListField(
        child=serializers.ChoiceField(choices=["file", "url", "text"]), required=False
    )
    formats = serializers.ListField(
        child=serializers.ChoiceField(
            choices=["pdf", "docx", "html", "markdown", "text", "csv", "json"]
        ),
        required=False,
    )
    page_min = serializers.IntegerField(min_value=1, required=False)
    page_max = serializers.IntegerField(min_value=1, required=False)
    heading = serializers.CharField(max_length=200, required=False)


class SearchInputSerializer(serializers.Serializer):
    query = serializers.CharField(max_length=2000)
    k = serializers.IntegerField(min_value=1, max_value=50, required=False, default=5)
    mode = serializers.ChoiceField(
        choices=["hybrid", "fts", "vector"], required=False, default="hybrid"
    )
    filters = SearchFiltersSerializer(required=False, default=dict)
    rerank = serializers.BooleanField(
        required=False,
        allow_null=True,
        default=None,
        help_text="false skips the studio's rerank model (when one is configured).",
    )


class ToolCreateInputSerializer(serializers.Serializer):
    name = serializers.CharField(max_length=64)
    description = serializers.CharField(required=False, allow_blank=True, default="")
    k = serializers.IntegerField(min_value=1, max_value=20, required=False, default=5)
