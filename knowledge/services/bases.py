"""Knowledge bases: create (with their chunk table), update, delete."""

from __future__ import annotations

import re
from typing import Any

from django.conf import settings
from django.db import IntegrityError, transaction
from django.utils.text import slugify

from common.exceptions import ApplicationError
from knowledge.embeddings import EmbeddingError, dimension
from knowledge.models import ACTIVE_STATUSES, Document, DocumentStatus, KnowledgeBase
from knowledge.store import get_store

SLUG = re.compile(r"^[a-z0-9][a-z0-9_-]*$")


def embedding_models_offered() -> list[str]:
    """The models a new base may use: the operator's default first, then the others."""
    models = [
        settings.STUDIO_KNOWLEDGE_EMBEDDING_MODEL,
        *settings.STUDIO_KNOWLEDGE_EMBEDDING_MODELS,
    ]
    return [m for i, m in enumerate(models) if m and m not in models[:i]]


def _field_error(field: str, message: str) -> ApplicationError:
    return ApplicationError(message, code="invalid", extra={field: [message]})


@transaction.atomic
def kb_create(
    *,
    owner: Any,
    name: str,
    slug: str = "",
    description: str = "",
    embedding_model: str | None = None,
) -> KnowledgeBase:
    """A new base with its chunk table. The embedding model is fixed from here on:
    "" makes a full-text-only base."""
    name = (name or "").strip()
    if not name:
        raise _field_error("name", "A knowledge base needs a name.")
    slug = (slug or slugify(name))[:64]
    if not SLUG.match(slug):
        raise _field_error(
            "slug", "Use lowercase letters, digits, - and _ (for example product-docs)."
        )
    if KnowledgeBase.objects.filter(owner=owner, slug=slug).exists():
        raise _field_error("slug", f"You already have a knowledge base named {slug!r}.")
    model = (
        settings.STUDIO_KNOWLEDGE_EMBEDDING_MODEL if embedding_model is None else embedding_model
    )
    if model and model not in embedding_models_offered():
        offered = ", ".join(embedding_models_offered()) or "none (full-text search only)"
        raise _field_error(
            "embedding_model", f"{model!r} is not an embedding model of this studio: {offered}."
        )
    try:
        dim = dimension(model) if model else None
    except EmbeddingError as exc:
        raise _field_error("embedding_model", str(exc)) from None
    try:
        with transaction.atomic():
            kb = KnowledgeBase.objects.create(
                owner=owner,
                slug=slug,
                name=name[:200],
                description=description,
                embedding_model=model,
                embedding_dim=dim,
                chunk_chars=settings.STUDIO_KNOWLEDGE_CHUNK_CHARS,
                chunk_overlap=settings.STUDIO_KNOWLEDGE_CHUNK_OVERLAP,
            )
    except IntegrityError:
        raise _field_error("slug", f"You already have a knowledge base named {slug!r}.") from None
    # Inside the transaction: if the table cannot be made, the row is not kept either.
    get_store().create(table=kb.table_name, dim=dim)
    return kb


def kb_update(
    *, kb: KnowledgeBase, name: str | None = None, description: str | None = None
) -> KnowledgeBase:
    if name is not None:
        if not name.strip():
            raise _field_error("name", "A knowledge base needs a name.")
        kb.name = name.strip()[:200]
    if description is not None:
        kb.description = description
    kb.save(update_fields=["name", "description", "updated_at"])
    return kb


@transaction.atomic
def kb_delete(*, kb: KnowledgeBase) -> None:
    """Delete the base, its documents and its chunk table. Workers still on one of its
    documents find the row gone at their next step and stop."""
    table = kb.table_name
    kb.delete()
    transaction.on_commit(lambda: get_store().drop(table=table))


def kb_ingest_cancel(*, kb: KnowledgeBase) -> int:
    """Cancel every document of the base that is queued or in progress; the worker on one
    stops at its next step. Returns how many were cancelled."""
    return Document.objects.filter(kb=kb, status__in=ACTIVE_STATUSES).update(
        status=DocumentStatus.CANCELLED, error="Cancelled."
    )
