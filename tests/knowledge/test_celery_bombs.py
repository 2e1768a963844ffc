"""Upload bombs against a real Celery worker (Redis broker, the test database): each one
ends failed with a message naming its limit and leaves no chunk, the worker stays alive
and takes the next document; a cancelled ingestion kills its parser."""

from __future__ import annotations

import json

import pytest
from django.db import transaction

from knowledge.models import ACTIVE_STATUSES, Document, DocumentKind, DocumentStatus
from knowledge.queue import ingest_after_commit
from knowledge.services.documents import content_hash, document_add_text
from knowledge.store import get_store
from tests.conftest import celery_worker_process
from tests.knowledge.files import (
    deep_json,
    docx_bomb,
    docx_lying_about_size,
    docx_of_paragraphs,
    docx_with_parts,
    giant_html,
    pdf_of_pages,
)
from tests.knowledge.processes import alive, parser_children
from tests.knowledge.test_celery_ingest import wait_for

pytestmark = [pytest.mark.celery_worker, pytest.mark.django_db(transaction=True)]


def stored(kb, name: str, content: bytes, fmt: str) -> Document:
    """A file as the upload stores it, queued for the worker. The upload's own checks
    are left out on purpose: the worker must hold by itself (a page it fetches is
    checked only there, and a file may predate a lowered limit)."""
    with transaction.atomic():
        document = Document.objects.create(
            kb=kb,
            kind=DocumentKind.FILE,
            filename=name,
            title=name,
            format=fmt,
            content=content,
            content_hash=content_hash(content),
            size=len(content),
        )
        ingest_after_commit(document.id)
    return document


def settled(document: Document) -> Document:
    wait_for(
        lambda: (
            Document.objects.filter(id=document.id).exclude(status__in=ACTIVE_STATUSES).exists()
        ),
        timeout=180,
        what=f"{document.filename or document.title} to be settled",
    )
    document.refresh_from_db()
    return document


def chunks_of(kb, document: Document) -> list:
    return get_store().document_chunks(table=kb.table_name, document_id=document.id)


def test_every_bomb_fails_by_name_leaves_no_chunk_and_the_worker_goes_on(fts_kb, celery_worker):
    bombs = [
        ("bomb.docx", docx_bomb(50_000_000), "docx", "STUDIO_KNOWLEDGE_MAX_ZIP_RATIO"),
        ("lying.docx", docx_lying_about_size(50_000_000), "docx", "damaged"),
        ("parts.docx", docx_with_parts(2_100), "docx", "STUDIO_KNOWLEDGE_MAX_ZIP_PARTS"),
        ("pages.pdf", pdf_of_pages(2_001), "pdf", "STUDIO_KNOWLEDGE_MAX_PDF_PAGES"),
        ("deep.json", deep_json(100_000), "json", "STUDIO_KNOWLEDGE_MAX_JSON_DEPTH"),
        ("giant.html", giant_html(400_000), "html", "STUDIO_KNOWLEDGE_MAX_HTML_NODES"),
        ("long.txt", b"word " * 1_100_000, "text", "STUDIO_KNOWLEDGE_MAX_TEXT_CHARS"),
    ]
    documents = [(stored(fts_kb, name, content, fmt), limit) for name, content, fmt, limit in bombs]
    normal = document_add_text(kb=fts_kb, title="After", text="The worker still reads this.")
    for document, limit in documents:
        document = settled(document)
        assert document.status == DocumentStatus.FAILED, (document.filename, document.error)
        assert limit in document.error, document.error
        assert chunks_of(fts_kb, document) == []
    assert settled(normal).status == DocumentStatus.READY
    assert celery_worker.poll() is None
    assert parser_children(celery_worker.pid) == []


def test_a_parse_over_its_memory_fails_by_name_and_the_worker_goes_on(fts_kb, transactional_db):
    hungry = json.dumps([{"a": i} for i in range(300_000)]).encode()
    with celery_worker_process(STUDIO_KNOWLEDGE_PARSE_MEMORY_MB="30") as worker:
        document = settled(stored(fts_kb, "hungry.json", hungry, "json"))
        assert document.status == DocumentStatus.FAILED
        assert "STUDIO_KNOWLEDGE_PARSE_MEMORY_MB" in document.error, document.error
        assert chunks_of(fts_kb, document) == []
        normal = document_add_text(kb=fts_kb, title="After", text="Small enough.")
        assert settled(normal).status == DocumentStatus.READY
        assert worker.poll() is None


def test_cancelling_an_ingestion_kills_its_parser(api, fts_kb, celery_worker):
    slow = docx_of_paragraphs([f"p{i}" for i in range(200_000)])  # many seconds to read
    document = stored(fts_kb, "slow.docx", slow, "docx")
    parsers = wait_for(
        lambda: parser_children(celery_worker.pid), what="the worker to start a parser"
    )
    assert api.post("/api/knowledge/docs/cancel").data == {"cancelled": 1}
    wait_for(lambda: not any(alive(pid) for pid in parsers), what="the parser to be killed")
    document.refresh_from_db()
    assert document.status == DocumentStatus.CANCELLED
    assert chunks_of(fts_kb, document) == []
    normal = document_add_text(kb=fts_kb, title="After", text="The next document.")
    assert settled(normal).status == DocumentStatus.READY
