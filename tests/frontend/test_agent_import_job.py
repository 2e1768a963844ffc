"""A large import on the new-agent page (headless Chromium, Daphne, a real Celery worker):
the page shows the job's progress while the worker imports, then lands on the agent; a
failed job's error shows like a refused small import's."""

from __future__ import annotations

import json

import pytest
from playwright.sync_api import expect

from agents_core.models import Agent, ImportJob
from agents_core.registry import definitions_sync
from tests.agents_core.factories import AgentFactory
from tests.agents_core.race import held_uncommitted
from tests.agents_core.test_import_jobs import _document
from tests.conftest import browser_login, daphne_process

pytestmark = [
    pytest.mark.browser,
    pytest.mark.celery_worker,
    pytest.mark.django_db(transaction=True),
    pytest.mark.timeout(300),
]


def _start_import(page, url: str, document: dict) -> None:
    page.goto(f"{url}/agents/new/")
    page.check("input[name=start][value=import]")
    page.fill("#import-text", json.dumps(document))
    page.dispatch_event("#import-text", "change")
    page.click("#create")


def test_the_page_follows_a_large_import_to_the_new_agent(browser, owner, celery_worker):
    definitions_sync()
    # The owner's other tab holds one slug uncommitted: the job waits there, running.
    with daphne_process(STUDIO_IMPORT_ASYNC_ITEMS="10") as url:
        page = browser_login(browser, url, "owner")
        with held_uncommitted(lambda: AgentFactory(slug="bulk-30", owner=owner)):
            _start_import(page, url, _document(60, 2))

            expect(page.locator("#import-progress-label")).to_contain_text("of 62 agents and tools")
            expect(page.locator("#import-progress")).to_be_visible()

        page.wait_for_url("**/agents/bulk-0/edit/", timeout=120_000)
    assert Agent.objects.filter(owner=owner, slug__startswith="bulk-").count() == 60
    assert ImportJob.objects.get().status == "completed"


def test_a_failed_job_shows_its_error_with_the_json_path(browser, owner, celery_worker):
    definitions_sync()
    document = _document(60, 2)
    document["agents"][42]["default_options"] = {"maxSteps": "many"}
    with daphne_process(STUDIO_IMPORT_ASYNC_ITEMS="10") as url:
        page = browser_login(browser, url, "owner")
        _start_import(page, url, document)

        expect(page.locator("#form-error")).to_contain_text(
            "$.document.agents[42].default_options", timeout=120_000
        )
    assert not Agent.objects.filter(slug__startswith="bulk-").exists()
