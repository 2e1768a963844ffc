"""The knowledge pages and the citations in headless Chromium, against Daphne, a real
Celery worker and Redis: create a base, upload files, watch the progress arrive over the
websocket, search, open a citation at its chunk; the tool console and a chat show the
results as citation cards, and the offline model's answer cites them."""

from __future__ import annotations

import os

import pytest

from agents_core.models import AgentTool, Source
from knowledge.models import Document, KnowledgeBase
from knowledge.services.documents import document_add_file
from knowledge.services.ingest import document_ingest
from knowledge.services.tools import kb_tool_create
from knowledge.store import get_store
from tests.agents_core.factories import AgentFactory
from tests.conftest import browser_login
from tests.knowledge.files import sample_files

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]
SHOTS = os.environ.get("STUDIO_SCREENSHOTS", "")


def shot(page, name: str) -> None:
    if SHOTS:
        page.screenshot(path=os.path.join(SHOTS, f"knowledge-{name}.png"), full_page=True)


@pytest.fixture
def drop_tables():
    yield
    for kb in KnowledgeBase.objects.all():
        get_store().drop(table=kb.table_name)


@pytest.mark.celery_worker
def test_create_upload_progress_search_and_open_a_citation(
    celery_worker, studio_server, browser, owner, drop_tables, tmp_path
):
    page = browser_login(browser, studio_server, "owner")
    page.click("#nav-knowledge")
    page.wait_for_selector("#kb-list .empty")
    page.fill("#kb-form input[name=name]", "Product docs")
    page.select_option("#kb-model", "")
    page.click("#kb-form button[type=submit]")
    page.wait_for_url(f"{studio_server}/knowledge/product-docs/")
    page.wait_for_selector("#kn-detail[data-socket='open']")

    paths = []
    for fmt in ("pdf", "docx", "csv"):
        name, content, _ = sample_files()[fmt]
        (tmp_path / name).write_bytes(content)
        paths.append(str(tmp_path / name))
    page.set_input_files("#add-file input[type=file]", paths)
    page.click("#add-file button[type=submit]")
    # Statuses change live, over the websocket, until every document is ready.
    page.wait_for_selector("#doc-rows tr[data-status='ready'] >> nth=2", timeout=90000)
    assert page.locator("#doc-rows tr[data-status='ready']").count() == 3
    page.wait_for_function(
        "() => document.getElementById('progress-text').textContent.startsWith('3 of 3 documents')"
    )
    shot(page, "base")

    page.fill("#search-form input[name=query]", "amber light")
    page.click("#search-form button[type=submit]")
    card = page.locator("#search-results .citation").first
    card.wait_for()
    assert "manual.pdf" in card.inner_text() and "page 2" in card.inner_text()
    assert "Troubleshooting" in card.inner_text()
    shot(page, "search")

    with page.context.expect_page() as opened:
        card.locator(".citation-link").click()
    viewer = opened.value
    viewer.wait_for_load_state()
    assert viewer.url.endswith("#chunk-1")
    target = viewer.locator(".chunk:target")
    assert "amber" in target.inner_text() and "page 2" in target.inner_text()
    shot(viewer, "viewer")
    page.context.close()


def test_an_outsider_gets_404_on_the_pages(studio_server, browser, owner, outsider, fts_kb):
    document = document_add_file(kb=fts_kb, filename="a.txt", content=b"private words")
    page = browser_login(browser, studio_server, "outsider")
    for path in ("/knowledge/docs/", f"/knowledge/docs/documents/{document.id}/"):
        response = page.goto(f"{studio_server}{path}")
        assert response.status == 404, path
    page.goto(f"{studio_server}/knowledge/")
    page.wait_for_selector("#kb-list .empty")
    page.context.close()


def test_the_tool_console_and_a_chat_show_citation_cards(studio_server, browser, owner, fts_kb):
    for fmt in ("markdown", "pdf"):
        name, content, _ = sample_files()[fmt]
        document_ingest(document_id=document_add_file(kb=fts_kb, filename=name, content=content).id)
    tool = kb_tool_create(kb=fts_kb, owner=owner, name="search_docs")
    agent = AgentFactory(slug="helper", name="Helper", owner=owner, model="studio/scripted")
    AgentTool.objects.create(agent=agent, tool=tool, key="search_docs", source=Source.STUDIO)
    page = browser_login(browser, studio_server, "owner")

    page.goto(f"{studio_server}/tools/search_docs/#test")
    page.click("#console-tab-json")
    page.fill("#console-json", '{"query": "amber light"}')
    page.click("#console-send")
    page.wait_for_selector("#console-status[data-status='completed']")
    first = page.locator("#console-citations .citation").first
    assert "manual.pdf" in first.inner_text() and "page 2" in first.inner_text()
    shot(page, "console")

    page.goto(f"{studio_server}/chat/helper/")
    page.fill("#composer-input", "use search_docs about the vantrel installer")
    page.press("#composer-input", "Enter")
    card = page.locator(".tool-card .citation").first
    card.wait_for(timeout=30000)
    assert "notes.md" in card.inner_text() and "Notes > Setup" in card.inner_text()
    page.wait_for_function(
        "() => document.querySelector('#chat-app').dataset.run === 'idle'", timeout=30000
    )
    answer = " ".join(page.locator(".turn-assistant .msg-text").all_inner_texts())
    assert "[1]" in answer and "Sources: [1] notes.md" in answer
    link = card.locator(".citation-link")
    assert link.get_attribute("href").startswith("/knowledge/docs/documents/")
    shot(page, "chat")
    page.context.close()
    assert Document.objects.count() == 2
