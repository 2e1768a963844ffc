"""/agents/new/ in headless Chromium, as a user without staff rights: from scratch, from a
template, as a copy of a code agent, and by importing an export under new names."""

from __future__ import annotations

import json

import pytest
from playwright.sync_api import expect

from agents_core.models import Agent, Source
from agents_core.registry import definitions_sync
from agents_core.services.agent_io import agent_document
from tests.conftest import browser_login

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


@pytest.fixture
def page(studio_server, browser, owner):
    definitions_sync()  # the code agents, in this test's (flushed) database
    page = browser_login(browser, studio_server, "owner")
    page.goto(f"{studio_server}/")
    page.click("#new-agent")
    expect(page.locator("#template-list input")).not_to_have_count(0)
    return page


def test_a_user_creates_an_agent_from_scratch_and_lands_on_its_settings(page, owner):
    assert not owner.is_staff
    page.fill("#field-name", "Trip planner")
    expect(page.locator("#field-slug")).to_have_value("trip-planner")
    page.fill("#field-model", "no-slash")
    page.click("#create")
    expect(page.locator("#error-model")).to_contain_text("is not a model string")
    assert not Agent.objects.filter(slug="trip-planner").exists()

    page.fill("#field-model", "studio/scripted")
    page.fill("#field-description", "Plans trips.")
    page.click("#create")
    page.wait_for_url("**/agents/trip-planner/edit/")
    agent = Agent.objects.get(slug="trip-planner")
    assert (agent.owner, agent.source, agent.description) == (owner, Source.STUDIO, "Plans trips.")


def test_a_taken_slug_is_shown_beside_the_slug(page):
    page.fill("#field-name", "Weather")
    page.fill("#field-slug", "weather-assistant")
    page.click("#create")
    expect(page.locator("#error-slug")).to_contain_text("already exists")


def test_a_user_starts_from_the_planner_template(page, owner):
    page.check("input[name=start][value=template]")
    page.check("input[name=template][value=planner]")
    expect(page.locator("#field-name")).to_have_value("Planner")
    page.fill("#field-slug", "my-plans")
    page.click("#create")
    page.wait_for_url("**/agents/my-plans/edit/")
    keys = set(Agent.objects.get(slug="my-plans").tool_bindings.values_list("key", flat=True))
    assert {"ask_user", "submit_plan", "task_write", "task_complete"} <= keys


def test_a_user_duplicates_a_code_agent_from_its_card(page, owner, studio_server):
    page.goto(f"{studio_server}/")
    page.click("[data-agent='weather-assistant'] >> text=Duplicate")
    expect(page.locator("input[name=start][value=duplicate]")).to_be_checked()
    expect(page.locator("#field-name")).to_have_value("Weather assistant (copy)")
    expect(page.locator("#field-slug")).to_have_value("weather-assistant-copy")
    page.click("#create")
    page.wait_for_url("**/agents/weather-assistant-copy/edit/")
    copy = Agent.objects.get(slug="weather-assistant-copy")
    assert (copy.source, copy.owner) == (Source.STUDIO, owner)
    assert copy.tool_bindings.count() == 2


def test_an_import_previews_then_asks_for_new_names_on_a_clash(page, owner):
    document = agent_document(agent=Agent.objects.get(slug="supervisor"))
    page.check("input[name=start][value=import]")
    page.fill("#import-text", json.dumps(document))
    page.dispatch_event("#import-text", "change")
    expect(page.locator("#field-slug")).to_have_value("supervisor")

    page.click("#preview")
    expect(page.locator("#form-error")).to_contain_text("Already taken: 'supervisor'")
    expect(page.locator("#clash-list input")).to_have_value("supervisor-2")
    page.fill("#clash-list input", "my-supervisor")
    page.click("#preview")
    expect(page.locator("#import-plan")).to_contain_text("1 agent (my-supervisor)")
    assert not Agent.objects.filter(slug="my-supervisor").exists()

    page.click("#create")
    page.wait_for_url("**/agents/my-supervisor/edit/")
    mine = Agent.objects.get(slug="my-supervisor")
    assert mine.owner == owner
    assert [b.child.slug for b in mine.subagent_bindings.all()] == ["researcher"]
