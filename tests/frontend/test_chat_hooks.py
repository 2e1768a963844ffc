"""Hook decisions and auto-resume as the chat page shows them (Chromium + Daphne).

The hooked agent is defined in code in this module; the server process loads it through
STUDIO_CODE_MODULES, as a project would load its own agents."""

from __future__ import annotations

import sys

import pytest

from agents_core.definitions import Agent as AgentDefinition
from tests.conftest import daphne_process
from tests.frontend.test_chat import (
    card_when,
    make_agent,
    open_chat,
    send,
    tool_named,
    wait_idle,
    warm_up,
    widget_of,
)
from tools_app.demo import unit_convert, weather_lookup

pytestmark = [
    pytest.mark.browser,
    pytest.mark.django_db(transaction=True),
    pytest.mark.timeout(300),
]


def refuse_unit_convert(info: dict) -> dict | None:
    if info["toolName"] == "unit_convert":
        return {
            "proceed": False,
            "output": {"value": 0, "unit": "none"},
            "reason": "conversions are switched off",
        }
    return None


def round_weather(info: dict) -> dict | None:
    if info["toolName"] == "weather_lookup" and info["output"]:
        return {"output": {**info["output"], "checked": True}, "reason": "stamped"}
    return None


hooked_assistant = AgentDefinition(
    id="hooked-assistant",
    name="Hooked assistant",
    instructions="Be brief.",
    model="studio/scripted",
    tools={"weather_lookup": weather_lookup, "unit_convert": unit_convert},
    hooks={"before_tool_call": refuse_unit_convert, "after_tool_call": round_weather},
)


@pytest.fixture
def hooked_server(transactional_db):
    from agents_core.registry import definitions_sync, discover

    registry = discover()
    registry.collect_module(sys.modules[__name__])
    definitions_sync(registry=registry)
    # The server imports this file by its dotted path (pytest may name it otherwise).
    with daphne_process(STUDIO_CODE_MODULES="tests.frontend.test_chat_hooks") as url:
        yield url


def test_hook_decisions_show_on_the_cards_they_changed(hooked_server, browser, owner):
    page = open_chat(browser, hooked_server, "/chat/hooked-assistant/")
    warm_up(page)
    send(page, "Use weather_lookup for Paris and unit_convert 3 km to mi")
    skipped = card_when(page, "unit_convert", "skipped")
    hooks = skipped.locator(".tool-hooks").inner_text()
    assert "before_tool_call" in hooks and "skipped the call" in hooks
    assert "conversions are switched off" in hooks
    assert '"unit": "none"' in skipped.locator(".tool-result").inner_text()
    weather = card_when(page, "weather_lookup", "completed")
    assert "after_tool_call" in weather.locator(".tool-hooks").inner_text()
    assert "changed the output" in weather.locator(".tool-hooks").inner_text()
    assert '"checked": true' in weather.locator(".tool-result").inner_text()
    wait_idle(page)
    page.screenshot(path="/tmp/chat-hooks.png")
    # The history shows each decision once (tool-hook events and hookDecisions lists).
    page.reload()
    card_when(page, "unit_convert", "skipped")
    assert page.locator(".tool-card[data-tool-name=unit_convert] .hook").count() == 1
    page.context.close()


def test_with_auto_resume_the_next_message_answers_the_question(studio_server, browser, owner):
    make_agent(owner, tool_named("ask_user"), autoResume=True)
    page = open_chat(browser, studio_server, "/chat/chat-helper/")
    send(page, "Ask me which city I live in")
    widget_of(page, "ask_user", "ask")
    page.wait_for_function("() => !document.querySelector('#composer-input').disabled")
    assert "your next message answers ask_user" in page.locator("#composer-hint").inner_text()
    send(page, "Porto")
    card = card_when(page, "ask_user", "completed")
    assert '"answer": "Porto"' in card.locator(".tool-result").inner_text()
    assert "You answered: Porto" in card.inner_text()
    wait_idle(page)
    page.context.close()
