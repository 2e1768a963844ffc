"""Large agent imports run by a real Celery worker: POST /api/agents/import answers 202 with
the job, its owner reads the progress (done / total) while the import's one transaction is
open, then the result the synchronous import would have answered; a bad item or a clash
fails the job with the same error body (JSON path included) and writes nothing."""

from __future__ import annotations

import time
from typing import Any

import pytest

from agents_core.models import Agent, ImportJob
from tests.agents_core.factories import AgentFactory
from tests.agents_core.race import _backends_waiting_on_a_lock, held_uncommitted
from tests.studio.db_state import db_fingerprint
from tools_app.models import Tool

# A few thousand rows on a shared machine: more than the default 120 s per test.
pytestmark = [
    pytest.mark.celery_worker,
    pytest.mark.django_db(transaction=True),
    pytest.mark.timeout(400),
]

AGENTS, TOOLS = 2000, 20
CODE = "def run(input):\n    return {'ok': True}\n"


def _document(agents: int = AGENTS, tools: int = TOOLS) -> dict[str, Any]:
    return {
        "format": "agent-studio.agent",
        "version": 1,
        "agent": "bulk-0",
        "agents": [
            {
                "slug": f"bulk-{i}",
                "name": f"Bulk {i}",
                "tools": [{"key": "work", "tool": f"bulk_tool_{i % tools}"}],
            }
            for i in range(agents)
        ],
        "tools": [
            {"name": f"bulk_tool_{i}", "kind": "python", "config": {"code": CODE}}
            for i in range(tools)
        ],
    }


def wait_for(predicate, *, timeout: float = 300.0, what: str = "condition") -> Any:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if value := predicate():
            return value
        time.sleep(0.1)
    raise AssertionError(f"timed out waiting for {what}")


def _finished(api, url: str) -> dict[str, Any]:
    def poll() -> dict[str, Any] | None:
        body = api.get(url).json()
        return body if body["status"] in ("completed", "failed") else None

    return wait_for(poll, what="the import job to finish")


@pytest.fixture
def async_imports(settings) -> None:
    settings.STUDIO_IMPORT_ASYNC_ITEMS = 100


@pytest.mark.usefixtures("async_imports")
def test_a_large_import_runs_in_a_worker_with_progress_its_owner_reads(
    api, outsider_api, anon_client, owner, celery_worker
):
    # Hold one of the slugs uncommitted, as another tab of the owner would: the job blocks
    # on it halfway, with its transaction open, and the progress is readable meanwhile.
    with held_uncommitted(lambda: AgentFactory(slug="bulk-1000", owner=owner)):
        response = api.post("/api/agents/import", {"document": _document()}, format="json")

        assert response.status_code == 202, response.content
        job = response.json()
        assert job["status"] in ("pending", "running") and job["total"] == AGENTS + TOOLS
        assert response["Location"] == job["url"] == f"/api/agents/import-jobs/{job['id']}/"
        wait_for(_backends_waiting_on_a_lock, what="the job to reach the held slug")
        halfway = wait_for(
            lambda: (body := api.get(job["url"]).json())["done"] >= TOOLS + 980 and body,
            what="the progress up to the held slug",
        )
        assert halfway["status"] == "running" and halfway["done"] < halfway["total"]
        assert not Agent.objects.filter(slug="bulk-0").exists()  # nothing committed yet
        # Only its owner reads it.
        assert outsider_api.get(job["url"]).status_code == 404
        assert anon_client.get(job["url"]).status_code in (401, 403)

    done = _finished(api, job["url"])

    assert done["status"] == "completed", done
    assert (done["done"], done["error"]) == (AGENTS + TOOLS, None)
    # The result is what a synchronous import answers.
    assert done["result"]["agent"] == "bulk-0"
    assert done["result"]["agents"][1234] == {
        "slug": "bulk-1234",
        "name": "Bulk 1234",
        "tools": ["work"],
        "subagents": [],
    }
    assert done["result"]["tools"] == [f"bulk_tool_{i}" for i in range(TOOLS)]
    assert Agent.objects.filter(owner=owner, slug__startswith="bulk-").count() == AGENTS
    assert Tool.objects.filter(owner=owner, name__startswith="bulk_tool_").count() == TOOLS
    assert ImportJob.objects.get(pk=job["id"]).request == {}  # the document is not kept


@pytest.mark.usefixtures("async_imports")
def test_a_bad_item_or_a_clash_fails_the_job_with_its_json_path_and_writes_nothing(
    api, owner, celery_worker
):
    bad = _document()
    bad["agents"][1234]["default_options"] = {"maxSteps": "many"}
    unbound = _document()
    # Found while creating (after 150 agents were written in the job's transaction).
    unbound["agents"][150]["tools"] = [{"key": "work", "tool": "no_such_tool"}]
    clash = _document()
    clash["agents"][77]["slug"] = "mine"
    AgentFactory(slug="mine", owner=owner)
    before = {table: row for table, row in db_fingerprint().items() if "importjob" not in table}

    answers = {}
    for what, document in (("bad", bad), ("unbound", unbound), ("clash", clash)):
        response = api.post("/api/agents/import", {"document": document}, format="json")
        assert response.status_code == 202, response.content
        answers[what] = _finished(api, response.json()["url"])

    assert all(a["status"] == "failed" for a in answers.values()), answers
    assert answers["bad"]["error_status"] == 400
    assert answers["bad"]["error"]["code"] == "invalid_document"
    assert answers["bad"]["error"]["errors"][0]["path"].startswith(
        "$.document.agents[1234].default_options"
    )
    assert answers["unbound"]["error_status"] == 400
    assert answers["unbound"]["error"]["errors"][0]["path"] == (
        "$.document.agents[150].tools[0].tool"
    )
    assert answers["clash"]["error_status"] == 409
    assert answers["clash"]["error"]["code"] == "name_clash"
    assert answers["clash"]["error"]["clashes"][0]["path"] == "$.document.agents[77].slug"
    after = {table: row for table, row in db_fingerprint().items() if "importjob" not in table}
    assert after == before


def test_a_small_import_stays_in_the_request(api, owner):
    response = api.post("/api/agents/import", {"document": _document(3, 1)}, format="json")

    assert response.status_code == 201, response.content
    assert response.json()["agents"][2]["slug"] == "bulk-2"
    assert not ImportJob.objects.exists()
