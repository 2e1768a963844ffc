"""Web pages: fetched through the address guard, a site crawled to a depth with a page
cap, robots.txt honoured. A local site on 127.0.0.1 stands for the web (loopback is let
through the guard only where a test says so)."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from knowledge.models import Document, DocumentStatus
from knowledge.services.documents import document_add_url, document_reindex
from knowledge.services.ingest import document_ingest
from knowledge.services.search import knowledge_search
from tests.knowledge.files import make_html

pytestmark = pytest.mark.django_db(transaction=True)

SITE = {
    "/robots.txt": b"User-agent: *\nDisallow: /private/\n",
    "/": make_html(
        "Home",
        [("Welcome", "The home page of the quarrelsome lighthouse keepers.")],
        links=["/a", "/private/secret", "http://example.org/elsewhere", "/b", "/c", "/a#top"],
    ),
    "/a": make_html("Page A", [("Alpha", "Alpha page about brass telescopes.")], links=["/d"]),
    "/b": make_html("Page B", [("Beta", "Beta page about foghorn maintenance.")]),
    "/c": make_html("Page C", [("Gamma", "Gamma page about tide tables.")]),
    "/d": make_html("Page D", [("Delta", "Delta page, two links away.")]),
    "/private/secret": make_html("Secret", [("No", "Robots may not read this.")]),
}


@contextmanager
def local_site(pages: dict[str, bytes]) -> Iterator[tuple[str, list[str]]]:
    seen: list[str] = []

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args: object) -> None:
            pass

        def do_GET(self) -> None:  # noqa: N802
            seen.append(self.path)
            body = pages.get(self.path)
            if body is None:
                self.send_response(404)
                self.end_headers()
                return
            self.send_response(200)
            kind = "text/plain" if self.path.endswith(".txt") else "text/html; charset=utf-8"
            self.send_header("Content-Type", kind)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}", seen
    finally:
        server.shutdown()
        server.server_close()


def ingest_queued(kb) -> None:
    """What the workers would do: every queued document of the base, crawled ones too."""
    while True:
        queued = list(Document.objects.filter(kb=kb, status=DocumentStatus.QUEUED))
        if not queued:
            return
        for document in queued:
            document_ingest(document_id=document.id)


def test_a_site_is_crawled_to_its_depth_within_the_cap_honouring_robots(fts_kb, settings):
    with local_site(SITE) as (base, seen):
        settings.STUDIO_PRIVATE_NETWORKS = [base.removeprefix("http://")]  # that port only
        root = document_add_url(kb=fts_kb, url=f"{base}/", depth=1, max_pages=3)
        ingest_queued(fts_kb)
    documents = Document.objects.filter(kb=fts_kb).order_by("id")
    assert [d.source_url for d in documents] == [f"{base}/", f"{base}/a", f"{base}/b"]
    assert all(d.status == DocumentStatus.READY for d in documents), [d.error for d in documents]
    assert all(d.crawl_root_id == root.id for d in documents[1:])
    assert "/private/secret" not in seen and "/d" not in seen  # robots; depth 1
    assert documents[0].title == "Home"
    [hit] = knowledge_search(kb=fts_kb, query="brass telescopes", k=1)["results"]
    assert hit["document"]["source_url"] == f"{base}/a"
    assert hit["url"].startswith(f"{base}/a#:~:text=")
    assert hit["viewer_url"].endswith("#chunk-0")


def test_a_page_robots_txt_forbids_fails_with_the_reason(fts_kb, settings):
    with local_site(SITE) as (base, seen):
        settings.STUDIO_PRIVATE_NETWORKS = [base.removeprefix("http://")]  # that port only
        document = document_add_url(kb=fts_kb, url=f"{base}/private/secret")
        document_ingest(document_id=document.id)
    document.refresh_from_db()
    assert document.status == DocumentStatus.FAILED
    assert "robots.txt" in document.error and "/private/secret" not in seen


def test_re_fetching_a_changed_page_rewrites_only_what_changed(fts_kb, settings):
    pages = dict(SITE)
    with local_site(pages) as (base, _):
        settings.STUDIO_PRIVATE_NETWORKS = [base.removeprefix("http://")]  # that port only
        document = document_add_url(kb=fts_kb, url=f"{base}/b")
        document_ingest(document_id=document.id)
        pages["/b"] = make_html("Page B", [("Beta", "Beta page about lantern lenses now.")])
        document_ingest(document_id=document_reindex(document=document).id)
    document.refresh_from_db()
    assert document.status == DocumentStatus.READY and document.chunks_embedded == 1
    assert knowledge_search(kb=fts_kb, query="foghorn")["results"] == []
    assert knowledge_search(kb=fts_kb, query="lantern")["results"]


@pytest.mark.parametrize(
    "url",
    ["http://127.0.0.1:{port}/", "http://169.254.169.254/latest/meta-data/", "http://10.0.0.1/"],
)
def test_the_guard_refuses_internal_addresses_when_the_page_is_fetched(fts_kb, url):
    with local_site(SITE) as (base, seen):
        port = base.rsplit(":", 1)[1]
        document = document_add_url(kb=fts_kb, url=url.format(port=port))
        document_ingest(document_id=document.id)
    document.refresh_from_db()
    assert document.status == DocumentStatus.FAILED
    assert "address guard" in document.error
    assert seen == []  # nothing reached the local server
