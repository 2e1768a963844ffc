"""Limits that hold across documents and at the door: a base's chunk count, and bombs
refused at upload (413, no row) when their declared sizes already tell."""

from __future__ import annotations

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile

from knowledge.models import Document, DocumentStatus
from knowledge.services.documents import document_add_text
from knowledge.services.ingest import document_ingest
from knowledge.store import get_store
from tests.knowledge.files import deep_json, docx_bomb, docx_with_parts


def ingest(document: Document) -> Document:
    document_ingest(document_id=document.id)
    document.refresh_from_db()
    return document


def test_a_document_that_would_overfill_the_base_fails_and_writes_nothing(fts_kb, settings):
    settings.STUDIO_KNOWLEDGE_MAX_BASE_CHUNKS = 5
    text = "\n\n".join(f"## Part {i}\n\nPart {i} of the guide." for i in range(4))
    first = ingest(document_add_text(kb=fts_kb, title="First", text=text))
    assert first.status == DocumentStatus.READY and first.chunk_count == 4
    second = ingest(document_add_text(kb=fts_kb, title="Second", text=text))
    assert second.status == DocumentStatus.FAILED
    assert "knowledge base is full" in second.error
    assert "STUDIO_KNOWLEDGE_MAX_BASE_CHUNKS" in second.error
    assert get_store().document_chunks(table=fts_kb.table_name, document_id=second.id) == []
    # Re-indexing the first replaces its own chunks: it still fits.
    Document.objects.filter(id=first.id).update(status=DocumentStatus.QUEUED)
    assert ingest(first).status == DocumentStatus.READY


@pytest.mark.parametrize(
    ("name", "make", "limit"),
    [
        ("bomb.docx", lambda: docx_bomb(50_000_000), "STUDIO_KNOWLEDGE_MAX_ZIP_RATIO"),
        ("parts.docx", lambda: docx_with_parts(2_100), "STUDIO_KNOWLEDGE_MAX_ZIP_PARTS"),
        ("deep.json", lambda: deep_json(100_000), "STUDIO_KNOWLEDGE_MAX_JSON_DEPTH"),
    ],
)
def test_a_bomb_that_its_declared_sizes_give_away_is_refused_at_upload(
    api, fts_kb, name, make, limit
):
    upload = SimpleUploadedFile(name, make())
    response = api.post("/api/knowledge/docs/documents/", {"file": [upload]}, format="multipart")
    assert response.status_code == 413, response.data
    assert response.data["code"] == "too_large"
    assert limit in response.data["detail"]
    assert not Document.objects.exists()
