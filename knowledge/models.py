"""Knowledge bases a user owns, and the documents ingested into them.

The chunks themselves (text, heading path, page, vector) live in the chunk store
(knowledge.store); a document row records where its ingestion stands and what it was
made from, so that a re-index can tell what changed.
"""

from __future__ import annotations

from django.conf import settings
from django.db import models
from django.db.models import Q


class KnowledgeBase(models.Model):
    owner = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="knowledge_bases"
    )
    slug = models.SlugField(max_length=64, help_text="Unique per owner; names the base in URLs.")
    name = models.CharField(max_length=200)
    description = models.TextField(blank=True)
    # The embedding model is fixed when the base is made, so that a base never mixes
    # vectors of two models; "" means full-text search only.
    embedding_model = models.CharField(max_length=200, blank=True)
    embedding_dim = models.PositiveIntegerField(null=True, blank=True)
    chunk_chars = models.PositiveIntegerField()
    chunk_overlap = models.PositiveIntegerField()
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["name", "id"]
        constraints = [
            models.UniqueConstraint(fields=["owner", "slug"], name="knowledge_base_owner_slug")
        ]

    def __str__(self) -> str:
        return self.slug

    @property
    def table_name(self) -> str:
        return f"kb_{self.pk}"

    @property
    def has_vectors(self) -> bool:
        return bool(self.embedding_model)


class DocumentKind(models.TextChoices):
    FILE = "file", "File"
    URL = "url", "Web page"
    TEXT = "text", "Pasted text"


class DocumentStatus(models.TextChoices):
    QUEUED = "queued"
    PARSING = "parsing"
    EMBEDDING = "embedding"
    READY = "ready"
    FAILED = "failed"
    CANCELLED = "cancelled"


ACTIVE_STATUSES = (DocumentStatus.QUEUED, DocumentStatus.PARSING, DocumentStatus.EMBEDDING)


class Document(models.Model):
    kb = models.ForeignKey(KnowledgeBase, on_delete=models.CASCADE, related_name="documents")
    kind = models.CharField(max_length=8, choices=DocumentKind.choices)
    title = models.CharField(max_length=500, blank=True)
    filename = models.CharField(max_length=255, blank=True)
    source_url = models.URLField(max_length=2000, blank=True)
    # The sniffed format: pdf, docx, html, markdown, text, csv, json.
    format = models.CharField(max_length=16, blank=True)
    # The bytes the chunks were made from (an upload, the pasted text, the fetched page).
    content = models.BinaryField(null=True, blank=True, editable=False)
    content_hash = models.CharField(max_length=64, blank=True)
    size = models.PositiveIntegerField(default=0)
    pages = models.PositiveIntegerField(null=True, blank=True)
    status = models.CharField(
        max_length=12,
        choices=DocumentStatus.choices,
        default=DocumentStatus.QUEUED,
        db_index=True,
    )
    error = models.TextField(blank=True)
    chunk_count = models.PositiveIntegerField(default=0)
    chunks_done = models.PositiveIntegerField(default=0)
    # Chunks that had to be embedded on the last ingestion (the rest were unchanged).
    chunks_embedded = models.PositiveIntegerField(default=0)
    attempts = models.PositiveIntegerField(default=0)
    # A worker holding the document beats here; the sweep requeues a silent one.
    heartbeat_at = models.DateTimeField(null=True, blank=True)
    started_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)
    # Site crawls: the page the crawl started from, and how many link levels remain.
    crawl_root = models.ForeignKey(
        "self", null=True, blank=True, on_delete=models.CASCADE, related_name="crawled"
    )
    crawl_depth = models.PositiveSmallIntegerField(default=0)
    crawl_max_pages = models.PositiveIntegerField(default=1)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["created_at", "id"]
        constraints = [
            # One document per page of a site: a crawl that runs twice (a restarted
            # worker) finds the page already there.
            models.UniqueConstraint(
                fields=["kb", "source_url"],
                condition=~Q(source_url=""),
                name="knowledge_document_kb_url",
            )
        ]

    def __str__(self) -> str:
        # A file is known by its name; a page and a pasted text by their title.
        if self.kind == DocumentKind.FILE and self.filename:
            return self.filename
        return self.title or self.source_url or f"document {self.pk}"

    @property
    def display_name(self) -> str:
        return str(self)
