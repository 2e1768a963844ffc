"""Ingestion of one document, as a Celery worker runs it (knowledge.tasks).

    claim -> read (a web page is fetched; a crawl adds the site's pages) -> parse ->
    chunk -> embed what is new -> write -> ready

A worker claims a document with one conditional UPDATE (queued, or in progress with a
heartbeat older than STUDIO_KNOWLEDGE_STALE_SECONDS: its worker died), which bumps
`attempts`; every later write of that worker names the attempt, so a worker that lost
the document (cancelled, deleted, taken over) stops at its next step.

Chunk ids are content hashes (document, heading, page, text, occurrence), and chunks are
written with an upsert on the id: a worker that dies mid-way and a successor that starts
over write the same ids, so no chunk is duplicated and none is missing; what the dead
worker already wrote is found in the store and not embedded again. Re-indexing a changed
document embeds only the chunks whose text (or place) changed and deletes the rest.
"""

from __future__ import annotations

import hashlib
import logging
import time
from collections import Counter
from datetime import timedelta
from typing import Any

from django.conf import settings
from django.db import IntegrityError, InterfaceError, OperationalError, transaction
from django.db.models import F, Q
from django.utils import timezone

from knowledge.crawl import CrawlError, fetch_page, robots_allows, same_site_links
from knowledge.embeddings import EmbeddingError, embed
from knowledge.models import ACTIVE_STATUSES, Document, DocumentKind, DocumentStatus, KnowledgeBase
from knowledge.parsing import Limits, ParseError, TooLarge, sniff
from knowledge.parsing.chunking import Draft
from knowledge.parsing.isolated import Job, Reading, read_isolated
from knowledge.queue import ingest_after_commit
from knowledge.services.progress import progress_publish
from knowledge.store import Chunk, get_store

log = logging.getLogger(__name__)


class Lost(Exception):  # noqa: N818 - a state, not an error
    """The document was cancelled, deleted or taken over by another worker."""


def document_claim(*, document_id: int) -> Document | None:
    """Take the document for this worker, or None when it is not ours to do."""
    now = timezone.now()
    stale = now - timedelta(seconds=settings.STUDIO_KNOWLEDGE_STALE_SECONDS)
    claimable = Q(status=DocumentStatus.QUEUED) | Q(
        status__in=[DocumentStatus.PARSING, DocumentStatus.EMBEDDING], heartbeat_at__lt=stale
    )
    claimed = Document.objects.filter(claimable, id=document_id).update(
        status=DocumentStatus.PARSING,
        attempts=F("attempts") + 1,
        heartbeat_at=now,
        started_at=now,
        finished_at=None,
        error="",
        chunks_done=0,
    )
    if claimed != 1:
        return None
    return Document.objects.select_related("kb").get(id=document_id)


def _step(document: Document, **fields: Any) -> None:
    """Record progress (and beat) if the document is still this attempt's."""
    fields.setdefault("heartbeat_at", timezone.now())
    updated = Document.objects.filter(
        id=document.id, attempts=document.attempts, status__in=ACTIVE_STATUSES
    ).update(**fields, updated_at=timezone.now())
    if updated != 1:
        raise Lost()
    for name, value in fields.items():
        if not hasattr(value, "resolve_expression"):
            setattr(document, name, value)


def document_ingest(*, document_id: int) -> None:
    document = document_claim(document_id=document_id)
    if document is None:
        return
    kb = document.kb
    progress_publish(kb=kb, document=document)
    try:
        _ingest(document, kb)
    except Lost:
        _forget_if_deleted(kb, document.id)
        log.info("knowledge document %s: stopped (cancelled, deleted or taken over)", document_id)
        return
    except (OperationalError, InterfaceError):
        raise  # the task retries; the sweep takes the document over if it cannot
    except (ParseError, CrawlError, EmbeddingError) as exc:
        _fail(document, str(exc))
    except Exception as exc:  # noqa: BLE001 - any failure is the document's, with its reason
        log.exception("knowledge document %s failed", document_id)
        _fail(document, f"{type(exc).__name__}: {exc}")
    if not Document.objects.filter(kb=kb, status__in=ACTIVE_STATUSES).exists():
        _optimize(kb)
    progress_publish(kb=kb, document=_reload(document))


def _ingest(document: Document, kb: KnowledgeBase) -> None:
    content = _content(document)
    parsed = _read(document, kb, content)
    chunks = make_chunks(document, parsed.drafts)
    store = get_store()
    existing = {
        chunk.id: chunk
        for chunk in store.document_chunks(
            table=kb.table_name, document_id=document.id, with_vectors=kb.has_vectors
        )
    }
    # Checked before the first write: a refused document leaves nothing behind.
    _check_room(kb, adding=len(chunks), replacing=len(existing))
    fresh = [chunk for chunk in chunks if chunk.id not in existing]
    _step(
        document,
        status=DocumentStatus.EMBEDDING,
        title=(parsed.title or document.title)[:500],
        pages=parsed.pages,
        chunk_count=len(chunks),
        chunks_done=len(chunks) - len(fresh),
    )
    progress_publish(kb=kb, document=document)
    # Chunks kept from before whose place in the document moved: new ordinal, old vector.
    moved = []
    for chunk in chunks:
        old = existing.get(chunk.id)
        if old is not None and old.ordinal != chunk.ordinal:
            chunk.vector = old.vector
            moved.append(chunk)
    store.upsert(table=kb.table_name, chunks=moved)
    batch_size = max(1, settings.STUDIO_KNOWLEDGE_EMBED_BATCH)
    for start in range(0, len(fresh), batch_size):
        batch = fresh[start : start + batch_size]
        if kb.has_vectors:
            vectors = embed([embedding_text(c) for c in batch], model=kb.embedding_model)
            for chunk, vector in zip(batch, vectors, strict=True):
                chunk.vector = vector
        _step(document)  # still ours? (cancel, delete) -- before writing, not after
        store.upsert(table=kb.table_name, chunks=batch)
        _step(document, chunks_done=F("chunks_done") + len(batch))
        document.chunks_done += len(batch)
        progress_publish(kb=kb, document=document)
    wanted = {chunk.id for chunk in chunks}
    store.delete_chunks(table=kb.table_name, ids=[i for i in existing if i not in wanted])
    _step(
        document,
        status=DocumentStatus.READY,
        chunks_embedded=len(fresh),
        finished_at=timezone.now(),
    )


def _read(document: Document, kb: KnowledgeBase, content: bytes) -> Reading:
    """The document's chunks, read in a child process within the limits; the worker
    beats (and sees a cancel, which kills the child) while it waits."""
    job = Job(
        content=content,
        format=document.format,
        limits=Limits.from_settings(),
        chunk_chars=kb.chunk_chars,
        overlap=kb.chunk_overlap,
        memory_mb=settings.STUDIO_KNOWLEDGE_PARSE_MEMORY_MB,
        seconds=settings.STUDIO_KNOWLEDGE_PARSE_SECONDS,
    )
    reading = read_isolated(job, beat=lambda: _step(document))
    log.info(
        "knowledge document %s: %d chunks read in %.2fs, peak %.0f MB",
        document.id,
        len(reading.drafts),
        reading.seconds,
        reading.peak_rss_mb,
    )
    return reading


def _check_room(kb: KnowledgeBase, *, adding: int, replacing: int) -> None:
    limit = settings.STUDIO_KNOWLEDGE_MAX_BASE_CHUNKS
    others = get_store().count(table=kb.table_name) - replacing
    if others + adding > limit:
        raise TooLarge(
            f"The knowledge base is full: it holds {others:,} chunks and this document "
            f"makes {adding:,} (the limit is {limit:,} per base, "
            "STUDIO_KNOWLEDGE_MAX_BASE_CHUNKS)."
        )


def _content(document: Document) -> bytes:
    """The bytes to parse; a web page is fetched (again) and kept with its format."""
    if document.kind != DocumentKind.URL:
        return bytes(document.content or b"")
    robots: dict = {}
    page = fetch_page(document.source_url, robots)
    fmt = sniff(page.body, filename=page.url.split("?")[0], content_type=page.content_type)
    _step(
        document,
        content=page.body,
        content_hash=hashlib.sha256(page.body).hexdigest(),
        size=len(page.body),
        format=fmt,
    )
    if fmt == "html" and document.crawl_depth > 0:
        links = same_site_links(page.body, page.url)
        _crawl(document, [url for url in links if robots_allows(url, robots)])
    return page.body


def _crawl(document: Document, links: list[str]) -> None:
    """Add the linked pages of the same site that robots.txt allows as documents, within
    the crawl's page cap."""
    root_id = document.crawl_root_id or document.id
    with transaction.atomic():
        root = Document.objects.select_for_update().get(id=root_id)
        room = root.crawl_max_pages - 1 - Document.objects.filter(crawl_root_id=root_id).count()
        for url in links:
            if room <= 0:
                break
            try:
                with transaction.atomic():
                    child = Document.objects.create(
                        kb_id=document.kb_id,
                        kind=DocumentKind.URL,
                        source_url=url,
                        title=url[:500],
                        format="html",
                        crawl_root_id=root_id,
                        crawl_depth=document.crawl_depth - 1,
                        crawl_max_pages=0,
                    )
            except IntegrityError:
                continue  # already in the base (this crawl or another)
            room -= 1
            ingest_after_commit(child.id)


def make_chunks(document: Document, drafts: list[Draft]) -> list[Chunk]:
    seen: Counter[tuple[str, int | None, str]] = Counter()
    chunks = []
    source = document.source_url or document.filename or document.title
    for ordinal, draft in enumerate(drafts):
        key = (draft.heading, draft.page, draft.text)
        occurrence = seen[key]
        seen[key] += 1
        digest = hashlib.sha256(
            "\x00".join(
                [str(document.id), draft.heading, str(draft.page), draft.text, str(occurrence)]
            ).encode()
        ).hexdigest()[:32]
        chunks.append(
            Chunk(
                id=f"{document.id}-{digest}",
                document_id=document.id,
                ordinal=ordinal,
                text=draft.text,
                heading=draft.heading,
                page=draft.page,
                source=source,
                format=document.format,
                kind=document.kind,
            )
        )
    return chunks


def embedding_text(chunk: Chunk) -> str:
    """What is embedded: the heading path gives a chunk the context of its section."""
    return f"{chunk.heading}\n\n{chunk.text}" if chunk.heading else chunk.text


def _fail(document: Document, reason: str) -> None:
    Document.objects.filter(id=document.id, attempts=document.attempts).update(
        status=DocumentStatus.FAILED,
        error=reason[:4000],
        finished_at=timezone.now(),
        updated_at=timezone.now(),
    )


def _reload(document: Document) -> Document | None:
    return Document.objects.filter(id=document.id).select_related("kb").defer("content").first()


def _forget_if_deleted(kb: KnowledgeBase, document_id: int) -> None:
    """A document deleted while its worker wrote: remove what the worker wrote after the
    delete removed the rest."""
    if not Document.objects.filter(id=document_id).exists():
        if KnowledgeBase.objects.filter(id=kb.id).exists():
            get_store().delete_document(table=kb.table_name, document_id=document_id)


def _optimize(kb: KnowledgeBase) -> None:
    try:
        started = time.perf_counter()
        info = get_store().optimize(
            table=kb.table_name, ann_min_rows=settings.STUDIO_KNOWLEDGE_ANN_MIN_ROWS
        )
        log.info(
            "knowledge base %s optimised in %.2fs: %s", kb.id, time.perf_counter() - started, info
        )
    except Exception:  # noqa: BLE001 - an index that was not refreshed is still correct
        log.warning("knowledge base %s: optimize failed", kb.id, exc_info=True)


def documents_sweep(*, stale_seconds: int | None = None) -> int:
    """Queue again the documents whose worker went silent (died) and queued ones whose
    task was lost; the claim decides who gets each. Returns how many were queued."""
    seconds = settings.STUDIO_KNOWLEDGE_STALE_SECONDS if stale_seconds is None else stale_seconds
    cutoff = timezone.now() - timedelta(seconds=seconds)
    stale = Document.objects.filter(
        Q(status__in=[DocumentStatus.PARSING, DocumentStatus.EMBEDDING], heartbeat_at__lt=cutoff)
        | Q(status=DocumentStatus.QUEUED, updated_at__lt=cutoff)
    ).values_list("id", flat=True)
    ids = list(stale[:1000])
    if stale_seconds == 0 and ids:
        # stale_seconds=0 (tests): taken over at once, so the heartbeat is made stale.
        Document.objects.filter(id__in=ids, status__in=ACTIVE_STATUSES).update(
            heartbeat_at=timezone.now()
            - timedelta(seconds=settings.STUDIO_KNOWLEDGE_STALE_SECONDS + 1)
        )
    with transaction.atomic():
        for document_id in ids:
            ingest_after_commit(document_id)
    return len(ids)
