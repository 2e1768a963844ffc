"""Adding tools to agents from the home page's agent cards, in headless Chromium."""

from __future__ import annotations

import os

import pytest

from agents_core.models import Agent, AgentTool
from tests.agents_core.editor.conftest import grant
from tests.conftest import browser_login
from tools_app.models import Tool

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

SHOTS = os.environ.get("STUDIO_SCREENSHOTS", "")


@pytest.fixture
def studio_agent(owner):
    return Agent.objects.create(slug="helper", name="Helper", model="offline/echo", owner=owner)


@pytest.fixture
def python_tool(owner):
    return Tool.objects.create(
        name="add_numbers",
        kind="python",
        owner=owner,
        description="Adds two numbers.",
        input_schema={"type": "object", "properties": {"a": {"type": "number"}}},
        config={"code": "return input"},
    )


def open_home(browser, studio_server):
    page = browser_login(browser, studio_server, "owner")
    page.goto(f"{studio_server}/")
    page.wait_for_selector("body[data-home-ready='1']")
    return page


def test_a_tool_is_added_to_an_agent_under_a_chosen_key_and_its_chip_appears(
    studio_server, browser, owner, studio_agent, python_tool
):
    page = open_home(browser, studio_server)
    card = page.locator(".agent-card[data-agent='helper']")
    card.hover()
    card.locator(".add-tool").click()
    card.locator(".pick-row[data-tool='add_numbers']").click()
    # The key defaults to the tool's name; a key the model cannot use is refused.
    assert card.locator(".pick-key").input_value() == "add_numbers"
    card.locator(".pick-key").fill("add numbers")
    assert "Only letters" in card.locator(".pick-help").inner_text()
    assert card.locator(".pick-add").is_disabled()
    card.locator(".pick-key").fill("sum")
    if SHOTS:
        page.screenshot(path=os.path.join(SHOTS, "home-add-tool.png"))
    card.locator(".pick-add").click()

    chip = card.locator(".chip[data-key='sum']")
    chip.wait_for()
    assert chip.get_attribute("title") == "add_numbers"
    binding = AgentTool.objects.get(agent=studio_agent, key="sum")
    assert binding.tool == python_tool

    # A second binding under the same key is refused before it is sent.
    card.hover()
    card.locator(".add-tool").click()
    card.locator(".pick-row[data-tool='unit_convert']").click()
    card.locator(".pick-key").fill("sum")
    assert "already has" in card.locator(".pick-help").inner_text()
    page.keyboard.press("Escape")

    # Removing the studio binding takes the chip away and the row with it.
    chip.locator(".chip-remove").click()
    chip.wait_for(state="detached")
    assert not AgentTool.objects.filter(agent=studio_agent).exists()
    page.context.close()


def test_a_code_agent_takes_a_studio_binding_that_survives_a_reload(
    studio_server, browser, owner, python_tool
):
    # researcher leaves its tools to editors (no `editor` option); changing a code agent's
    # tools needs the change permission.
    grant(owner, "change_agent")
    page = open_home(browser, studio_server)
    card = page.locator(".agent-card[data-agent='researcher']")
    code_chips = card.locator(".chip[data-source='code']")
    # Bindings made in code have no remove button.
    assert code_chips.count() >= 1
    assert code_chips.locator(".chip-remove").count() == 0
    card.hover()
    card.locator(".add-tool").click()
    # A code agent is shared by everyone: only shared tools are offered.
    card.locator(".pick-row[data-tool='unit_convert']").wait_for()
    assert card.locator(".pick-row[data-tool='add_numbers']").count() == 0
    card.locator(".pick-search").fill("convert")
    card.locator(".pick-row[data-tool='unit_convert']").click()
    card.locator(".pick-key").fill("convert-units")
    card.locator(".pick-add").click()
    card.locator(".chip[data-key='convert-units']").wait_for()

    page.reload()
    page.wait_for_selector("body[data-home-ready='1']")
    chip = page.locator(".agent-card[data-agent='researcher'] .chip[data-key='convert-units']")
    assert chip.get_attribute("data-source") == "studio"
    assert chip.locator(".chip-remove").count() == 1
    # The change is an editor save of the agent, with a revision.
    researcher = Agent.objects.get(slug="researcher")
    assert researcher.revisions.get().fields == ["studio_tools"]

    # The tool's page lists the agents that use it, with the key the model sees.
    page.goto(f"{studio_server}/tools/unit_convert/")
    used = page.locator("#used-by .chip[data-agent='researcher']")
    used.first.wait_for()
    texts = [" ".join(text.split()) for text in used.all_inner_texts()]
    assert "Researcher as convert-units" in texts
    page.context.close()


def test_add_tool_shows_only_where_the_policy_and_the_permission_allow_it(
    studio_server, browser, owner, studio_agent
):
    page = open_home(browser, studio_server)
    # Without the change permission: the user's own studio agent only.
    assert page.locator(".agent-card[data-agent='helper'] .add-tool").count() == 1
    assert page.locator(".agent-card[data-agent='researcher'] .add-tool").count() == 0
    page.context.close()

    grant(owner, "change_agent")
    page = open_home(browser, studio_server)
    if SHOTS:
        page.screenshot(path=os.path.join(SHOTS, "home-add-tool-policy.png"), full_page=True)
    assert page.locator(".agent-card[data-agent='researcher'] .add-tool").count() == 1
    # weather-assistant's policy opens tool descriptions only: its tools stay as in code.
    assert page.locator(".agent-card[data-agent='weather-assistant'] .add-tool").count() == 0
    assert page.locator(".agent-card[data-agent='helper'] .add-tool").count() == 1
    page.context.close()
