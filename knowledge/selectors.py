"""Reads of knowledge: a user sees only their own bases and documents."""

from __future__ import annotations

from typing import Any

from django.db.models import Count, Min, Q, QuerySet, Sum
from django.utils import timezone

from knowledge.models import ACTIVE_STATUSES, Document, DocumentStatus, KnowledgeBase


def kb_list(*, user: Any) -> QuerySet[KnowledgeBase]:
    if user is None or not user.is_authenticated:
        return KnowledgeBase.objects.none()
    return KnowledgeBase.objects.filter(owner=user)


def kb_get(*, user: Any, slug: str) -> KnowledgeBase | None:
    return kb_list(user=user).filter(slug=slug).first()


def document_list(*, kb: KnowledgeBase) -> QuerySet[Document]:
    return Document.objects.filter(kb=kb).defer("content")


def document_get(*, kb: KnowledgeBase, document_id: int) -> Document | None:
    return document_list(kb=kb).filter(id=document_id).first()


def kb_progress(*, kb: KnowledgeBase) -> dict[str, Any]:
    """Where the base's ingestion stands: documents and chunks done of total, the rate
    of the documents in progress, and the errors."""
    active = Q(status__in=ACTIVE_STATUSES)
    totals = Document.objects.filter(kb=kb).aggregate(
        documents=Count("id"),
        active=Count("id", filter=active),
        ready=Count("id", filter=Q(status=DocumentStatus.READY)),
        failed=Count("id", filter=Q(status=DocumentStatus.FAILED)),
        cancelled=Count("id", filter=Q(status=DocumentStatus.CANCELLED)),
        active_chunks=Sum("chunk_count", filter=active),
        active_chunks_done=Sum("chunks_done", filter=active),
        embedding_chunks_done=Sum("chunks_done", filter=Q(status=DocumentStatus.EMBEDDING)),
        started=Min("started_at", filter=active),
    )
    started = totals.pop("started")
    elapsed = (timezone.now() - started).total_seconds() if started else 0.0
    embedded = totals.pop("embedding_chunks_done") or 0
    chunks_total = totals.pop("active_chunks") or 0
    chunks_done = totals.pop("active_chunks_done") or 0
    errors = list(
        Document.objects.filter(kb=kb, status=DocumentStatus.FAILED)
        .order_by("-updated_at")
        .values("id", "title", "filename", "source_url", "error")[:5]
    )
    return {
        **totals,
        "chunks_total": chunks_total,
        "chunks_done": chunks_done,
        "rate_chunks_per_s": round(embedded / elapsed, 2) if elapsed > 0 else None,
        "errors": errors,
    }
