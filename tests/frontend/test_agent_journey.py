"""The whole builder journey in headless Chromium, as a new user without staff rights:
create an agent from nothing with its model, write its instructions, make a Python tool
and add it, add a sub-agent, require approval for the tool, chat and meet the approval
widget; then duplicate a code agent, and export an agent and import it again."""

from __future__ import annotations

import json
import re

import pytest
from playwright.sync_api import expect

from agents_core.models import Agent, Source
from agents_core.registry import definitions_sync
from tests.conftest import browser_login
from tests.frontend.test_chat import send, widget_of
from tools_app.models import Tool

pytestmark = [
    pytest.mark.browser,
    pytest.mark.django_db(transaction=True),
    pytest.mark.timeout(300),
]

CODE = 'return {"shout": input["text"].upper()}'
SCHEMA = {"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]}


def test_a_new_user_builds_an_agent_chats_with_it_and_copies_agents(studio_server, browser, owner):
    definitions_sync()
    assert not owner.is_staff
    page = browser_login(browser, studio_server, "owner")
    page.set_default_timeout(90_000)

    # From nothing, with a model picked from the list.
    page.click("#new-agent")
    page.fill("#field-name", "Shouter")
    # The offline model (no key needed), found by typing and picked by keyboard.
    page.click("#field-model")
    page.fill("#field-model", "scripted")
    listbox = page.locator(".model-picker-list")
    expect(listbox).to_have_attribute("aria-busy", "false")  # the list is for "scripted"
    offline = listbox.locator("[data-model='studio/scripted']")
    expect(offline).to_be_visible()
    expect(offline).not_to_contain_text("no key")
    page.press("#field-model", "ArrowDown")
    expect(offline).to_have_class(re.compile(r"\bactive\b"))
    page.press("#field-model", "Enter")
    expect(page.locator("#field-model")).to_have_value("studio/scripted")
    expect(listbox).to_be_hidden()
    page.click("#create")
    page.wait_for_url("**/agents/shouter/edit/", wait_until="commit")
    expect(page.locator("#lockbar")).to_have_attribute("data-mode", "mine")

    # Instructions, as a list of blocks.
    page.select_option("#instructions-form", "list")
    page.locator(".block-content").first.fill("Shout what you are given.")
    page.click("#instructions-add")
    page.locator(".block-content").nth(1).fill("Use the shout tool.")
    page.click("#save")
    expect(page.locator("#save-status")).to_contain_text("Saved")

    # A Python tool, made in the tool panel.
    page.goto(f"{studio_server}/tools/new/")
    page.click(".type-option[data-kind='python']")
    page.fill("#tool-name", "shout")
    page.fill("#tool-description", "Shouts the text.")
    page.fill("#tool-input-schema", json.dumps(SCHEMA))
    page.fill("#tool-config textarea[name='$.code']", CODE)
    page.click("#save-tool")
    page.wait_for_url(f"{studio_server}/tools/shout/")

    # Added to the agent, with approval required, and a sub-agent.
    page.goto(f"{studio_server}/agents/shouter/edit/")
    expect(page.locator("#lockbar")).to_have_attribute("data-mode", "mine")
    expect(page.locator("#add-tool-name option[value=shout]")).to_have_count(1)
    page.select_option("#add-tool-name", "shout")
    page.click("#add-tool-button")
    page.click("#save")
    expect(page.locator("#save-status")).to_contain_text("Saved")
    toggle = page.locator("#approval-rows [data-key=shout] .approval-toggle")
    toggle.check()
    page.wait_for_function(
        "async () => (await (await fetch('/api/agents/shouter/tools/shout/')).json())"
        ".requires_approval"
    )
    page.select_option("#subagent-pick", "researcher")
    page.click("#subagent-add")
    expect(page.locator("#subagent-rows")).to_contain_text("agent-researcher")
    agent = Agent.objects.get(slug="shouter")
    assert agent.instructions == ["Shout what you are given.", "Use the shout tool."]
    assert agent.tool_bindings.get(key="shout").requires_approval
    assert [b.child.slug for b in agent.subagent_bindings.all()] == ["researcher"]

    # The chat stops at the approval widget before the tool runs.
    page.goto(f"{studio_server}/chat/shouter/")
    send(page, 'use shout with {"text": "hello"}')
    widget = widget_of(page, "shout", "approval")
    expect(widget).to_be_visible()

    # A code agent duplicated into one of the user's own.
    page.goto(f"{studio_server}/agents/new/?duplicate=supervisor")
    expect(page.locator("#field-slug")).to_have_value("supervisor-copy")
    page.click("#create")
    page.wait_for_url("**/agents/supervisor-copy/edit/")
    copy = Agent.objects.get(slug="supervisor-copy")
    assert (copy.source, copy.owner) == (Source.STUDIO, owner)

    # Exported, then imported again under new names (the tool's name is taken too).
    page.goto(f"{studio_server}/agents/shouter/edit/")
    page.wait_for_selector("#export-json")
    document = page.evaluate(
        "async () => (await fetch(document.getElementById('export-json').href)).json()"
    )
    page.goto(f"{studio_server}/agents/new/")
    page.check("input[name=start][value=import]")
    page.fill("#import-text", json.dumps(document))
    page.dispatch_event("#import-text", "change")
    page.fill("#field-slug", "shouter-again")
    page.click("#create")
    expect(page.locator("#clash-list input")).to_have_count(1)
    expect(page.locator("#clash-list input")).to_have_value("shout_2")
    page.click("#create")
    page.wait_for_url("**/agents/shouter-again/edit/")
    again = Agent.objects.get(slug="shouter-again")
    assert again.instructions == agent.instructions
    binding = again.tool_bindings.get(key="shout")
    assert (binding.tool.name, binding.requires_approval) == ("shout_2", True)
    assert Tool.objects.get(name="shout_2").config["code"] == CODE
