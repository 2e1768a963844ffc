"""Documents of a base: add a file, a web page (optionally its site) or pasted text,
re-index, delete. Each write checks its input before any row is made; ingestion is
queued after commit (knowledge.tasks)."""

from __future__ import annotations

import hashlib
from typing import Any

from django.conf import settings
from django.db import IntegrityError, transaction

from common.exceptions import ApplicationError, Conflict
from knowledge.models import ACTIVE_STATUSES, Document, DocumentKind, DocumentStatus, KnowledgeBase
from knowledge.parsing import ParseError, TooLarge, UnsupportedFormat, sniff
from knowledge.queue import ingest_after_commit
from knowledge.services.progress import progress_publish
from knowledge.store import get_store
from tools_app import net


def content_hash(content: bytes) -> str:
    return hashlib.sha256(content).hexdigest()


def _enqueue(document: Document) -> None:
    ingest_after_commit(document.id)


def _check_size(size: int, what: str) -> None:
    limit = settings.STUDIO_KNOWLEDGE_MAX_UPLOAD_BYTES
    if size > limit:
        raise ApplicationError(
            f"The {what} is {size:,} bytes; the limit is {limit:,}.",
            status_code=413,
            code="too_large",
        )
    if size == 0:
        raise ApplicationError(f"The {what} is empty.", code="empty")


@transaction.atomic
def document_add_file(
    *, kb: KnowledgeBase, filename: str, content: bytes, content_type: str = ""
) -> Document:
    _check_size(len(content), "file")
    try:
        fmt = sniff(content, filename=filename, content_type=content_type)
    except UnsupportedFormat as exc:
        raise ApplicationError(str(exc), status_code=415, code="unsupported_format") from None
    except TooLarge as exc:
        raise ApplicationError(str(exc), status_code=413, code="too_large") from None
    except ParseError as exc:
        raise ApplicationError(str(exc), code="unreadable") from None
    document = Document.objects.create(
        kb=kb,
        kind=DocumentKind.FILE,
        filename=filename[:255],
        title=filename[:500],
        format=fmt,
        content=content,
        content_hash=content_hash(content),
        size=len(content),
    )
    _enqueue(document)
    return document


@transaction.atomic
def document_add_text(*, kb: KnowledgeBase, text: str, title: str = "") -> Document:
    content = text.encode("utf-8")
    _check_size(len(content.strip()), "text")
    document = Document.objects.create(
        kb=kb,
        kind=DocumentKind.TEXT,
        title=(title or text.strip().splitlines()[0])[:500],
        format="markdown",
        content=content,
        content_hash=content_hash(content),
        size=len(content),
    )
    _enqueue(document)
    return document


def url_check(url: str) -> str:
    """The URL if the outbound guard lets its shape and host through (addresses are
    checked again when the page is fetched); a 400 with the guard's reason otherwise."""
    try:
        net.parse_target(url)
    except net.BlockedURL as exc:
        raise ApplicationError(str(exc), code="blocked_url", extra={"url": [str(exc)]}) from None
    return url


@transaction.atomic
def document_add_url(
    *, kb: KnowledgeBase, url: str, depth: int = 0, max_pages: int | None = None
) -> Document:
    url = url_check(url.strip())
    if depth > settings.STUDIO_KNOWLEDGE_CRAWL_MAX_DEPTH:
        message = f"The crawl depth is at most {settings.STUDIO_KNOWLEDGE_CRAWL_MAX_DEPTH}."
        raise ApplicationError(message, extra={"depth": [message]})
    cap = settings.STUDIO_KNOWLEDGE_CRAWL_MAX_PAGES
    pages = max_pages if max_pages is not None else (1 if depth == 0 else min(50, cap))
    if pages > cap:
        message = f"A crawl brings in at most {cap} pages."
        raise ApplicationError(message, extra={"max_pages": [message]})
    try:
        with transaction.atomic():
            document = Document.objects.create(
                kb=kb,
                kind=DocumentKind.URL,
                source_url=url,
                title=url[:500],
                format="html",
                crawl_depth=depth,
                crawl_max_pages=pages,
            )
    except IntegrityError:
        message = "This page is already in the knowledge base; re-index it instead."
        raise ApplicationError(message, code="duplicate", extra={"url": [message]}) from None
    _enqueue(document)
    return document


@transaction.atomic
def document_reindex(*, document: Document) -> Document:
    """Queue the document again: its source is read anew (a web page is fetched again)
    and only the chunks that changed are embedded."""
    updated = (
        Document.objects.filter(id=document.id)
        .exclude(status__in=ACTIVE_STATUSES)
        .update(status=DocumentStatus.QUEUED, error="", chunks_done=0, heartbeat_at=None)
    )
    if not updated:
        raise Conflict("The document is being ingested already.", code="busy")
    document.refresh_from_db()
    _enqueue(document)
    transaction.on_commit(lambda: progress_publish(kb=document.kb, document=document))
    return document


@transaction.atomic
def document_delete(*, document: Document) -> None:
    """Delete the document (and the pages crawled from it) with their chunks. A worker
    still on it finds the row gone at its next step and removes what it wrote."""
    kb = document.kb
    ids = [document.id, *Document.objects.filter(crawl_root=document).values_list("id", flat=True)]
    Document.objects.filter(id__in=ids).delete()
    store = get_store()

    def drop_chunks() -> None:
        for document_id in ids:
            store.delete_document(table=kb.table_name, document_id=document_id)
        progress_publish(kb=kb)

    transaction.on_commit(drop_chunks)


@transaction.atomic
def documents_add_uploads(*, kb: KnowledgeBase, files: Any) -> list[Document]:
    """Add uploaded files, all or none: one refused file adds none of the others. An
    oversized file is refused before it is read."""
    for upload in files:
        _check_size(upload.size, f"file {upload.name!r}")
    return [
        document_add_file(
            kb=kb,
            filename=upload.name,
            content=upload.read(),
            content_type=upload.content_type or "",
        )
        for upload in files
    ]
