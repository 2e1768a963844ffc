"""Ingestion by a real Celery worker process (Redis broker, the test database): every
file type, and a worker killed mid-ingestion leaves no duplicate and no missing chunk."""

from __future__ import annotations

import time

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import override_settings

from knowledge.models import ACTIVE_STATUSES, Document, DocumentStatus
from knowledge.parsing import parse
from knowledge.parsing.chunking import chunk_blocks
from knowledge.services.documents import document_add_text
from knowledge.services.ingest import documents_sweep, make_chunks
from knowledge.store import get_store
from tests.conftest import celery_worker_process
from tests.knowledge.embed_server import embeddings_server
from tests.knowledge.files import sample_files

pytestmark = [pytest.mark.celery_worker, pytest.mark.django_db(transaction=True)]
FAKE_MODEL = "openai/fake-embed"


def wait_for(predicate, *, timeout: float = 90.0, what: str = "condition"):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(0.2)
    raise AssertionError(f"timed out waiting for {what}")


def test_a_worker_ingests_every_file_type(api, fts_kb, celery_worker):
    uploads = [SimpleUploadedFile(name, content) for name, content, _ in sample_files().values()]
    response = api.post("/api/knowledge/docs/documents/", {"file": uploads}, format="multipart")
    assert response.status_code == 201, response.data
    wait_for(
        lambda: not Document.objects.filter(status__in=ACTIVE_STATUSES).exists(),
        what="every document to be ingested",
    )
    for document in Document.objects.all():
        assert document.status == DocumentStatus.READY, (document.filename, document.error)
        assert document.chunk_count == document.chunks_done >= 1
    for fmt, (_, _, word) in sample_files().items():
        hits = api.post("/api/knowledge/docs/search", {"query": word}, format="json").data
        assert hits["results"][0]["document"]["format"] == fmt


def test_a_worker_killed_mid_ingestion_leaves_no_duplicate_or_missing_chunk(
    make_kb, owner, transactional_db, monkeypatch
):
    monkeypatch.setenv("OPENAI_API_KEY", "test-key")
    with embeddings_server(delay=0.25) as (url, server):
        env = {
            "STUDIO_KNOWLEDGE_EMBEDDING_MODELS": FAKE_MODEL,
            "STUDIO_KNOWLEDGE_EMBEDDING_API_BASE": url,
            "STUDIO_MODEL_API_BASES": url.removesuffix("/v1"),
            "STUDIO_KNOWLEDGE_EMBED_BATCH": "4",
            "OPENAI_API_KEY": "test-key",
        }
        with override_settings(
            STUDIO_KNOWLEDGE_EMBEDDING_MODELS=[FAKE_MODEL],
            STUDIO_KNOWLEDGE_EMBEDDING_API_BASE=url,
            STUDIO_MODEL_API_BASES=[url.removesuffix("/v1")],
        ):
            kb = make_kb(owner, "killed", embedding_model=FAKE_MODEL)
            assert kb.embedding_dim == 64
            text = "\n\n".join(
                f"## Section {i}\n\n" + f"Section {i} talks about subject number {i}. " * 8
                for i in range(40)
            )
            with celery_worker_process(**env) as first:
                document = document_add_text(kb=kb, title="Long", text=text)
                wait_for(
                    lambda: Document.objects.filter(id=document.id, chunks_done__gte=8).exists(),
                    what="the first worker to be mid-way",
                )
                first.kill()  # SIGKILL: no warm shutdown, the task is left unfinished
                first.wait()
            document.refresh_from_db()
            assert document.status == DocumentStatus.EMBEDDING
            done_by_first = document.chunks_done
            assert 8 <= done_by_first < document.chunk_count
            first_texts = server.texts

            with celery_worker_process(**env):
                assert documents_sweep(stale_seconds=0) == 1
                wait_for(
                    lambda: Document.objects.filter(
                        id=document.id, status=DocumentStatus.READY
                    ).exists(),
                    what="the second worker to finish",
                )
        document.refresh_from_db()
        assert document.attempts == 2
        stored = get_store().document_chunks(table=kb.table_name, document_id=document.id)
        ids = [chunk.id for chunk in stored]
        assert len(ids) == len(set(ids)), "duplicate chunks"
        parsed = parse(text.encode(), format="markdown")
        drafts = chunk_blocks(parsed.blocks, chunk_chars=kb.chunk_chars, overlap=kb.chunk_overlap)
        expected = {chunk.id for chunk in make_chunks(document, drafts)}
        assert set(ids) == expected, "missing or unexpected chunks"
        assert [chunk.ordinal for chunk in stored] == list(range(len(expected)))
        assert all(chunk.vector is None for chunk in stored)  # not asked for
        assert document.chunk_count == document.chunks_done == len(expected)
        # The second worker embedded only what the first had not written.
        assert document.chunks_embedded == len(expected) - done_by_first
        assert server.texts - first_texts <= len(expected) - done_by_first + 4
