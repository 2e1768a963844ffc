"""Ingestion as the worker runs it (the service called directly): statuses, chunks in the
store, re-indexing only what changed, cancel and delete while in progress."""

from __future__ import annotations

import pytest

from knowledge.models import Document, DocumentStatus
from knowledge.parsing.chunking import Draft
from knowledge.services.documents import document_add_file, document_add_text, document_reindex
from knowledge.services.ingest import document_ingest, make_chunks
from knowledge.services.search import knowledge_search
from knowledge.store import get_store
from tests.knowledge.files import make_markdown, sample_files

pytestmark = pytest.mark.django_db(transaction=True)


def ingest(document: Document) -> Document:
    document_ingest(document_id=document.id)
    document.refresh_from_db()
    return document


def test_a_text_document_becomes_ready_and_searchable(fts_kb):
    document = document_add_text(kb=fts_kb, title="Notes", text="# Notes\n\nThe vantrel installer.")
    assert document.status == DocumentStatus.QUEUED
    document = ingest(document)
    assert document.status == DocumentStatus.READY, document.error
    assert document.chunk_count == document.chunks_done == 1
    result = knowledge_search(kb=fts_kb, query="vantrel")
    assert result["mode"] == "fts"
    [hit] = result["results"]
    assert hit["heading"] == "Notes" and "vantrel" in hit["text"]
    assert hit["url"] == f"/knowledge/docs/documents/{document.id}/#chunk-0"


def test_every_format_is_ingested_and_found_by_its_own_word(fts_kb):
    for fmt, (name, content, word) in sample_files().items():
        document = ingest(document_add_file(kb=fts_kb, filename=name, content=content))
        assert document.status == DocumentStatus.READY, (fmt, document.error)
        assert document.format == fmt
        [top, *_] = knowledge_search(kb=fts_kb, query=word, k=3)["results"]
        assert top["document"]["id"] == document.id, fmt


def test_a_pdf_hit_carries_its_page(fts_kb):
    name, content, _ = sample_files()["pdf"]
    document = ingest(document_add_file(kb=fts_kb, filename=name, content=content))
    [hit] = knowledge_search(kb=fts_kb, query="amber light reset", k=1)["results"]
    assert (hit["page"], hit["heading"]) == (2, "Troubleshooting")
    assert hit["document"]["name"] == "manual.pdf" and document.pages == 2


def test_reindexing_a_changed_document_rewrites_only_the_changed_chunks(fts_kb):
    words = ["amber", "basalt", "sapphire", "dune", "ember", "fjord"]
    sections = [(f"Part {i}", f"Paragraph {i} is about {word}.") for i, word in enumerate(words)]
    document = document_add_file(
        kb=fts_kb, filename="guide.md", content=make_markdown("Guide", sections)
    )
    document = ingest(document)
    before = {
        c.id for c in get_store().document_chunks(table=fts_kb.table_name, document_id=document.id)
    }
    assert document.chunks_embedded == len(before) == 6

    sections[2] = ("Part 2", "Paragraph 2 is about emerald now.")
    changed = make_markdown("Guide", sections)
    Document.objects.filter(id=document.id).update(content=changed)
    document = ingest(document_reindex(document=document))
    after = {
        c.id for c in get_store().document_chunks(table=fts_kb.table_name, document_id=document.id)
    }
    assert document.status == DocumentStatus.READY
    assert document.chunks_embedded == 1  # only the changed section was written anew
    assert len(after) == 6 and len(after - before) == 1 and len(before - after) == 1
    assert knowledge_search(kb=fts_kb, query="emerald")["results"][0]["heading"] == "Guide > Part 2"
    assert knowledge_search(kb=fts_kb, query="sapphire")["results"] == []


def test_running_the_same_ingestion_twice_leaves_one_copy_of_each_chunk(fts_kb):
    document = ingest(document_add_text(kb=fts_kb, text="alpha beta gamma " * 400))
    count = document.chunk_count
    Document.objects.filter(id=document.id).update(status=DocumentStatus.QUEUED)
    document = ingest(document)
    chunks = get_store().document_chunks(table=fts_kb.table_name, document_id=document.id)
    assert len(chunks) == len({c.id for c in chunks}) == count
    assert document.chunks_embedded == 0  # everything was already there


def test_a_document_that_cannot_be_parsed_fails_with_the_reason(fts_kb):
    document = document_add_file(kb=fts_kb, filename="x.json", content=b'{"a": 1}')
    Document.objects.filter(id=document.id).update(content=b'{"broken": ', format="json")
    document = ingest(document)
    assert document.status == DocumentStatus.FAILED
    assert "not valid JSON" in document.error


def test_a_cancelled_document_is_not_ingested(fts_kb):
    document = document_add_text(kb=fts_kb, text="cancel me")
    Document.objects.filter(id=document.id).update(status=DocumentStatus.CANCELLED)
    document = ingest(document)
    assert document.status == DocumentStatus.CANCELLED
    assert get_store().document_chunks(table=fts_kb.table_name, document_id=document.id) == []


def test_identical_chunks_of_one_document_get_distinct_ids(fts_kb):
    document = document_add_text(kb=fts_kb, text="same")
    chunks = make_chunks(document, [Draft("same", "", None), Draft("same", "", None)])
    assert len({c.id for c in chunks}) == 2


def test_cancelling_mid_ingestion_stops_the_worker_before_its_next_write(
    fts_kb, settings, monkeypatch
):
    from knowledge.services import ingest as ingest_module
    from knowledge.services.bases import kb_ingest_cancel
    from knowledge.store.lance import LanceStore

    settings.STUDIO_KNOWLEDGE_EMBED_BATCH = 2
    text = "\n\n".join(f"Paragraph {i}. " * 60 for i in range(8))
    document = document_add_text(kb=fts_kb, text=text)
    real_upsert, real_publish = LanceStore.upsert, ingest_module.progress_publish
    writes = []

    def counting_upsert(self, *, table, chunks):
        if chunks:
            writes.append(len(chunks))
        real_upsert(self, table=table, chunks=chunks)

    def publish_then_cancel(*, kb, document=None):
        real_publish(kb=kb, document=document)
        if document is not None and document.chunks_done > 0:
            kb_ingest_cancel(kb=kb)  # the user presses Cancel after the first batch

    monkeypatch.setattr(LanceStore, "upsert", counting_upsert)
    monkeypatch.setattr(ingest_module, "progress_publish", publish_then_cancel)
    document = ingest(document)
    assert document.status == DocumentStatus.CANCELLED
    assert document.chunk_count > 2
    assert writes == [2]  # nothing written after the cancel
