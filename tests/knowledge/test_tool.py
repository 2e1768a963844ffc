"""The knowledge_search tool type: run from the API (the tool console's path), only in
its owner's bases, and in a chat with the offline model, whose answer cites the results."""

from __future__ import annotations

import pytest
from channels.db import database_sync_to_async

from agents_core.models import AgentTool, Source
from agents_core.services.threads import thread_create
from knowledge.services.documents import document_add_file
from knowledge.services.ingest import document_ingest
from knowledge.services.tools import kb_tool_create
from tests.agents_core.factories import AgentFactory
from tests.agents_core.runtime.conftest import run_to_end
from tests.knowledge.files import sample_files
from tools_app.models import Tool

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def filled_kb(fts_kb):
    for fmt in ("markdown", "pdf"):
        name, content, _ = sample_files()[fmt]
        document = document_add_file(kb=fts_kb, filename=name, content=content)
        document_ingest(document_id=document.id)
    return fts_kb


def test_the_base_page_makes_a_bound_search_tool(api, filled_kb):
    response = api.post("/api/knowledge/docs/tool", {"name": "search_docs"}, format="json")
    assert response.status_code == 201, response.data
    assert response.data["kind"] == "knowledge_search"
    assert response.data["config"]["knowledge_base"] == "docs"
    bad = api.post("/api/knowledge/docs/tool", {"name": "Bad Name"}, format="json")
    assert bad.status_code == 400 and "name" in bad.data
    taken = api.post("/api/knowledge/docs/tool", {"name": "search_docs"}, format="json")
    assert taken.status_code == 400 and "name" in taken.data


def test_the_tool_console_runs_a_query_and_gets_cited_chunks(api, outsider_api, owner, filled_kb):
    kb_tool_create(kb=filled_kb, owner=owner, name="search_docs")
    response = api.post(
        "/api/tools/search_docs/execute", {"input": {"query": "amber light"}}, format="json"
    )
    body = response.json()
    assert response.status_code == 200, body
    assert body["status"] == "completed", body
    output = body["output"]
    assert output["kind"] == "knowledge_search"
    top = output["results"][0]
    assert (top["document"]["name"], top["page"], top["heading"]) == (
        "manual.pdf",
        2,
        "Troubleshooting",
    )
    assert top["url"].endswith("#chunk-1") and top["score"] > 0
    bad = api.post("/api/tools/search_docs/execute", {"input": {"q": "x"}}, format="json")
    assert bad.json()["status"] == "failed" and bad.json()["errors"][0]["path"] == "$"
    hidden = outsider_api.post(
        "/api/tools/search_docs/execute", {"input": {"query": "amber"}}, format="json"
    )
    assert hidden.status_code == 404


def test_a_tool_cannot_read_another_users_base(outsider_api, outsider, filled_kb):
    # The outsider points a tool of their own at the owner's base slug.
    Tool.objects.create(
        name="spy",
        kind="knowledge_search",
        owner=outsider,
        source=Source.STUDIO,
        input_schema={"type": "object", "properties": {"query": {"type": "string"}}},
        config={"knowledge_base": "docs"},
    )
    response = outsider_api.post(
        "/api/tools/spy/execute", {"input": {"query": "amber"}}, format="json"
    )
    body = response.json()
    assert body["status"] == "failed"
    assert "not found" in body["error"]
    assert body["output"] is None


async def test_a_chat_with_the_offline_model_answers_with_citations(owner, filled_kb, settings):
    settings.STUDIO_OFFLINE_DELAY = 0.0
    thread = await database_sync_to_async(_agent_thread)(owner, filled_kb)
    run, events = await run_to_end(thread, "use search_docs about the vantrel installer", owner)
    assert run.status == "completed"
    result = next(e for e in events if e["type"] == "tool-result")
    assert result["output"]["results"][0]["document"]["name"] == "notes.md"
    text = "".join(e.get("textDelta", "") for e in events if e["type"] == "text-delta")
    assert "vantrel" in text and "[1]" in text
    assert "Sources: [1] notes.md (Notes > Setup)" in text


def _agent_thread(owner, kb):
    tool = kb_tool_create(kb=kb, owner=owner, name="search_docs")
    agent = AgentFactory(slug="helper", owner=owner, model="studio/scripted")
    AgentTool.objects.create(agent=agent, tool=tool, key="search_docs", source=Source.STUDIO)
    return thread_create(user=owner, agent=agent)
