"""The knowledge REST API: create, add, search; bad input refused with no row left;
owner only (another user gets 404 on the base, its documents and its search)."""

from __future__ import annotations

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import override_settings

from knowledge.models import Document, KnowledgeBase
from knowledge.services.ingest import document_ingest
from knowledge.store import get_store
from tests.knowledge.files import sample_files

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def drop_tables():
    yield
    for kb in KnowledgeBase.objects.all():
        get_store().drop(table=kb.table_name)


def test_create_list_and_read_a_base(api, drop_tables):
    response = api.post(
        "/api/knowledge/", {"name": "Product docs", "embedding_model": ""}, format="json"
    )
    assert response.status_code == 201, response.data
    assert response.data["slug"] == "product-docs"
    assert response.data["search_mode"] == "fts"
    listed = api.get("/api/knowledge/").data
    assert [kb["slug"] for kb in listed["results"]] == ["product-docs"]
    detail = api.get("/api/knowledge/product-docs/").data
    assert detail["progress"]["documents"] == 0


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"name": ""}, "name"),
        ({"name": "x", "slug": "Not A Slug"}, "slug"),
        ({"name": "x", "embedding_model": "openai/not-offered"}, "embedding_model"),
    ],
)
def test_bad_bases_are_refused_with_the_field(api, body, field):
    response = api.post("/api/knowledge/", body, format="json")
    assert response.status_code == 400
    assert field in response.data
    assert not KnowledgeBase.objects.exists()


def test_a_second_base_with_the_same_slug_is_refused(api, fts_kb):
    response = api.post("/api/knowledge/", {"name": "docs", "embedding_model": ""}, format="json")
    assert response.status_code == 400 and "slug" in response.data


def test_upload_pages_and_text_are_added_queued(api, fts_kb):
    name, content, _ = sample_files()["pdf"]
    upload = SimpleUploadedFile(name, content, content_type="application/pdf")
    response = api.post("/api/knowledge/docs/documents/", {"file": [upload]}, format="multipart")
    assert response.status_code == 201, response.data
    [doc] = response.data["results"]
    assert (doc["format"], doc["status"], doc["kind"]) == ("pdf", "queued", "file")
    response = api.post(
        "/api/knowledge/docs/documents/", {"text": "# Hi\n\nthere", "title": "Hi"}, format="json"
    )
    assert response.status_code == 201 and response.data["results"][0]["format"] == "markdown"
    response = api.post(
        "/api/knowledge/docs/documents/",
        {"url": "https://example.com/guide", "depth": 1, "max_pages": 5},
        format="json",
    )
    assert response.status_code == 201, response.data
    assert response.data["results"][0]["crawl_max_pages"] == 5
    assert Document.objects.count() == 3


@pytest.mark.parametrize(
    ("name", "content", "status", "code"),
    [
        ("fake.pdf", b"this is not a pdf", 415, "unsupported_format"),
        ("image.png", b"\x89PNG\r\n\x1a\n\x00\x00\x00", 415, "unsupported_format"),
        ("data.json", b'{"open": ', 400, "unreadable"),
        ("empty.txt", b"", 400, "empty"),
    ],
)
def test_bad_files_get_a_clear_4xx_and_no_row(api, fts_kb, name, content, status, code):
    upload = SimpleUploadedFile(name, content)
    response = api.post("/api/knowledge/docs/documents/", {"file": [upload]}, format="multipart")
    assert response.status_code == status, response.data
    assert response.data["code"] == code and response.data["detail"]
    assert not Document.objects.exists()


@override_settings(STUDIO_KNOWLEDGE_MAX_UPLOAD_BYTES=100)
def test_a_file_over_the_limit_is_refused_with_413(api, fts_kb):
    upload = SimpleUploadedFile("big.txt", b"x" * 101)
    response = api.post("/api/knowledge/docs/documents/", {"file": [upload]}, format="multipart")
    assert response.status_code == 413
    assert "limit is 100" in response.data["detail"]
    assert not Document.objects.exists()


def test_one_bad_file_among_several_adds_none(api, fts_kb):
    good = SimpleUploadedFile("a.txt", b"fine text")
    bad = SimpleUploadedFile("b.pdf", b"not a pdf")
    response = api.post("/api/knowledge/docs/documents/", {"file": [good, bad]}, format="multipart")
    assert response.status_code == 415
    assert not Document.objects.exists()


@pytest.mark.parametrize(
    "url",
    ["http://localhost/admin", "file:///etc/passwd", "http://user:pw@example.com/", "ftp://x.org/"],
)
def test_the_address_guard_refuses_urls_before_any_row(api, fts_kb, url):
    response = api.post("/api/knowledge/docs/documents/", {"url": url}, format="json")
    assert response.status_code == 400
    assert response.data["code"] == "blocked_url" and "url" in response.data
    assert not Document.objects.exists()


def test_crawl_limits_are_enforced(api, fts_kb):
    response = api.post(
        "/api/knowledge/docs/documents/",
        {"url": "https://example.com/", "depth": 9},
        format="json",
    )
    assert response.status_code == 400 and "depth" in response.data
    response = api.post(
        "/api/knowledge/docs/documents/",
        {"url": "https://example.com/", "depth": 1, "max_pages": 100000},
        format="json",
    )
    assert response.status_code == 400 and "max_pages" in response.data
    assert not Document.objects.exists()


def test_search_returns_top_k_with_scores_and_sources(api, fts_kb):
    for fmt in ("markdown", "text"):
        name, content, _ = sample_files()[fmt]
        upload = SimpleUploadedFile(name, content)
        doc_id = api.post(
            "/api/knowledge/docs/documents/", {"file": [upload]}, format="multipart"
        ).data["results"][0]["id"]
        document_ingest(document_id=doc_id)
    response = api.post(
        "/api/knowledge/docs/search", {"query": "vantrel installer", "k": 1}, format="json"
    )
    assert response.status_code == 200, response.data
    [hit] = response.data["results"]
    assert hit["document"]["name"] == "notes.md" and hit["heading"] == "Notes > Setup"
    assert hit["score"] > 0 and hit["citation"] == "[1]"
    filtered = api.post(
        "/api/knowledge/docs/search",
        {"query": "vantrel", "filters": {"formats": ["text"]}},
        format="json",
    )
    assert filtered.data["results"] == []
    bad = api.post("/api/knowledge/docs/search", {"query": "x", "k": 500}, format="json")
    assert bad.status_code == 400 and "k" in bad.data
    vector = api.post("/api/knowledge/docs/search", {"query": "x", "mode": "vector"}, format="json")
    assert vector.status_code == 400 and vector.data["code"] == "no_vectors"


def test_chunks_reindex_and_delete(api, fts_kb):
    doc_id = api.post(
        "/api/knowledge/docs/documents/", {"text": "alpha " * 10}, format="json"
    ).data["results"][0]["id"]
    busy = api.post(f"/api/knowledge/docs/documents/{doc_id}/reindex")
    assert busy.status_code == 409  # still queued
    document_ingest(document_id=doc_id)
    chunks = api.get(f"/api/knowledge/docs/documents/{doc_id}/chunks/").data["chunks"]
    assert len(chunks) == 1 and chunks[0]["chunk"] == 0
    assert api.post(f"/api/knowledge/docs/documents/{doc_id}/reindex").data["status"] == "queued"
    assert api.post("/api/knowledge/docs/cancel").data == {"cancelled": 1}
    assert api.get(f"/api/knowledge/docs/documents/{doc_id}/").data["status"] == "cancelled"
    assert api.get("/api/knowledge/docs/progress").data["cancelled"] == 1
    assert api.delete(f"/api/knowledge/docs/documents/{doc_id}/").status_code == 204
    assert get_store().document_chunks(table=fts_kb.table_name, document_id=doc_id) == []
    assert not Document.objects.exists()


def test_anonymous_callers_are_refused(anon_client, fts_kb):
    assert anon_client.get("/api/knowledge/").status_code in (401, 403)
    assert anon_client.post("/api/knowledge/docs/search", {"query": "x"}).status_code in (401, 403)


def test_an_outsider_gets_404_everywhere(outsider_api, api, fts_kb):
    doc_id = api.post(
        "/api/knowledge/docs/documents/", {"text": "secret plans"}, format="json"
    ).data["results"][0]["id"]
    document_ingest(document_id=doc_id)
    base = "/api/knowledge/docs"
    calls = [
        ("get", f"{base}/", None),
        ("patch", f"{base}/", {"name": "mine"}),
        ("delete", f"{base}/", None),
        ("get", f"{base}/documents/", None),
        ("post", f"{base}/documents/", {"text": "intrusion"}),
        ("get", f"{base}/documents/{doc_id}/", None),
        ("delete", f"{base}/documents/{doc_id}/", None),
        ("post", f"{base}/documents/{doc_id}/reindex", None),
        ("get", f"{base}/documents/{doc_id}/chunks/", None),
        ("post", f"{base}/search", {"query": "secret"}),
        ("get", f"{base}/progress", None),
        ("post", f"{base}/cancel", None),
        ("post", f"{base}/tool", {"name": "steal"}),
    ]
    for method, url, body in calls:
        response = getattr(outsider_api, method)(url, body, format="json")
        assert response.status_code == 404, (method, url, response.status_code)
    assert outsider_api.get("/api/knowledge/").data["results"] == []
    assert Document.objects.count() == 1 and KnowledgeBase.objects.get().name == "docs"


def test_deleting_a_base_removes_its_documents_and_its_chunk_table(api, owner):
    api.post("/api/knowledge/", {"name": "gone", "embedding_model": ""}, format="json")
    kb = KnowledgeBase.objects.get(slug="gone")
    doc_id = api.post(
        "/api/knowledge/gone/documents/", {"text": "short lived"}, format="json"
    ).data["results"][0]["id"]
    document_ingest(document_id=doc_id)
    assert get_store().count(table=kb.table_name) == 1
    assert api.delete("/api/knowledge/gone/").status_code == 204
    assert not KnowledgeBase.objects.exists() and not Document.objects.exists()
    assert kb.table_name not in get_store().db.table_names()
    assert api.get("/api/knowledge/gone/").status_code == 404
