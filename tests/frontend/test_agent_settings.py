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
    # An anthropic model: its cacheControl provider option shows in the preview.
    return AgentFactory(
        slug="mine",
        name="Mine",
        owner=owner,
        instructions="Be brief.",
        model="anthropic/claude-sonnet-4-5",
    )


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


def test_approval_on_a_tool_and_sub_agents_added_refused_on_a_cycle_and_removed(
    studio_server, browser, mine, owner
):
    from agents_core.models import AgentTool, SubAgent
    from tools_app.models import Tool

    AgentTool.objects.create(
        agent=mine, tool=Tool.objects.get(name="weather_lookup"), key="weather"
    )
    kid = AgentFactory(slug="kid", name="Kid", owner=owner)
    SubAgent.objects.create(parent=kid, child=mine, key="boss")
    page = open_settings(browser, studio_server, "mine")
    expect(page.locator("#lockbar")).to_have_attribute("data-mode", "mine")

    row = page.locator("#approval-rows [data-key=weather]")
    expect(row).to_contain_text("sync")
    row.locator(".approval-toggle").check()
    expect(row.locator(".approval-toggle")).to_be_checked()
    # The section reloads from the server once the change is saved.
    expect(page.locator("#approval-rows [data-key=weather] .approval-toggle")).to_be_checked()
    page.wait_for_function(
        "async () => (await (await fetch('/api/agents/mine/tools/weather/')).json())"
        ".requires_approval"
    )
    assert AgentTool.objects.get(agent=mine, key="weather").requires_approval is True

    page.select_option("#subagent-pick", "kid")
    page.click("#subagent-add")
    expect(page.locator("#subagent-error")).to_contain_text("would make a cycle")
    page.select_option("#subagent-pick", "researcher")
    page.fill("#subagent-key", "research")
    page.fill("#subagent-description", "Looks things up.")
    page.click("#subagent-add")
    expect(page.locator("#subagent-rows [data-key=research]")).to_contain_text("agent-research")
    binding = SubAgent.objects.get(parent=mine, key="research")
    assert (binding.child.slug, binding.description_override) == ("researcher", "Looks things up.")

    page.locator("#subagent-rows [data-key=research]").get_by_text("Remove").click()
    expect(page.locator("#subagent-rows")).to_contain_text("No sub-agents.")
    assert not SubAgent.objects.filter(parent=mine).exists()
