"""The agent settings page in headless Chromium: structured instructions with a preview,
default options and memory saved under the editor's version and lock, export, delete; a
code agent's settings read-only."""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

from agents_core.models import Agent, Revision
from agents_core.registry import definitions_sync
from tests.agents_core.factories import AgentFactory
from tests.conftest import browser_login

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


@pytest.fixture
def mine(owner):
    definitions_sync()
    return AgentFactory(slug="mine", name="Mine", owner=owner, instructions="Be brief.")


def open_settings(browser, studio_server, slug: str):
    page = browser_login(browser, studio_server, "owner")
    page.goto(f"{studio_server}/agents/{slug}/edit/")
    expect(page.locator("#option-maxSteps")).to_be_visible()
    return page


def test_instructions_as_system_messages_with_a_preview_then_options_and_memory(
    studio_server, browser, mine
):
    page = open_settings(browser, studio_server, "mine")
    expect(page.locator("#lockbar")).to_have_attribute("data-mode", "mine")
    page.select_option("#instructions-form", "options")
    page.click("#instructions-add")
    page.locator(".block-content").nth(1).fill("Cache this part.")
    page.locator(".block-options").nth(1).fill(
        '{"anthropic": {"cacheControl": {"type": "ephemeral"}}}'
    )
    page.click("#instructions-preview")
    expect(page.locator(".preview-message")).to_have_count(2)
    expect(page.locator(".preview-message").nth(1)).to_contain_text('"cache_control"')
    page.click("#save")
    expect(page.locator("#save-status")).to_contain_text("Saved · version 2")
    assert Agent.objects.get(slug="mine").instructions == [
        {"role": "system", "content": "Be brief."},
        {
            "role": "system",
            "content": "Cache this part.",
            "providerOptions": {"anthropic": {"cacheControl": {"type": "ephemeral"}}},
        },
    ]

    page.fill("#option-maxSteps", "0")
    page.click("#options-save")
    expect(page.locator("#options-status")).to_contain_text("$.maxSteps")
    page.fill("#option-maxSteps", "7")
    page.select_option("#option-toolChoice", "none")
    page.fill("#option-lastMessages", "20")
    page.uncheck("#option-generateTitle")
    page.click("#options-save")
    expect(page.locator("#options-status")).to_have_text("Saved · version 3")
    agent = Agent.objects.get(slug="mine")
    assert agent.default_options == {
        "maxSteps": 7,
        "toolChoice": "none",
        "lastMessages": 20,
        "generateTitle": False,
    }
    assert Revision.objects.filter(agent=agent).count() == 2
    # The editor took the new version: an instructions save after it is not stale.
    page.locator(".block-content").first.fill("Be very brief.")
    page.click("#save")
    expect(page.locator("#save-status")).to_contain_text("Saved · version 4")


def test_export_links_and_a_confirmed_delete(studio_server, browser, mine):
    page = open_settings(browser, studio_server, "mine")
    expect(page.locator("#export-json")).to_have_attribute(
        "href", "/api/agents/mine/export?format=json"
    )
    with page.expect_download() as download:
        page.click("#export-python")
    assert "Agent(" in open(download.value.path()).read()

    page.once("dialog", lambda dialog: dialog.accept("wrong"))
    page.click("#agent-delete")
    assert Agent.objects.filter(slug="mine").exists()
    page.once("dialog", lambda dialog: dialog.accept("mine"))
    page.click("#agent-delete")
    page.wait_for_url(f"{studio_server}/")
    assert not Agent.objects.filter(slug="mine").exists()


def test_a_code_agents_settings_are_shown_read_only(studio_server, browser, owner):
    definitions_sync()
    page = open_settings(browser, studio_server, "weather-assistant")
    expect(page.locator("#option-maxSteps")).to_have_value("5")
    expect(page.locator("#option-maxSteps")).to_be_disabled()
    expect(page.locator("#options-save")).to_be_disabled()
    expect(page.locator("#agent-delete")).to_have_count(0)
    expect(page.locator("#settings-block")).to_contain_text("Code-owned · read-only")
