"""The chat page's tool-call features in headless Chromium against a real Daphne server
and the offline model: client functions run in the browser, per-binding approval, Stop,
the task list beside the chat, and a card that joins a call late (get-partial)."""

from __future__ import annotations

import pytest

from agents_core.models import Agent, AgentTool, Message, Run, StreamEvent, Thread
from tests.conftest import browser_login, daphne_process
from tests.frontend.test_chat import (
    LONG_NOTE,
    card_when,
    make_agent,
    note_tool,
    open_chat,
    send,
    tool_named,
    wait_idle,
    warm_up,
    widget_of,
)
from tools_app.models import Tool

pytestmark = [
    pytest.mark.browser,
    pytest.mark.django_db(transaction=True),
    pytest.mark.timeout(300),
]


def client_tool(owner, name: str, function: str, schema: dict | None = None) -> Tool:
    return Tool.objects.create(
        name=name,
        description="Runs in the browser.",
        kind="client",
        owner=owner,
        input_schema=schema or {"type": "object", "properties": {}},
        config={"function": function},
    )


def test_a_client_function_runs_in_the_browser_and_the_run_continues(studio_server, browser, owner):
    make_agent(owner, client_tool(owner, "browser_clock", "local_time"))
    page = open_chat(browser, studio_server, "/chat/chat-helper/")
    send(page, "Use browser_clock")
    page.wait_for_selector('.tool-card[data-tool-name="browser_clock"][data-status="completed"]')
    result = page.locator(".tool-card[data-tool-name=browser_clock] .tool-result").inner_text()
    assert '"timezone"' in result and '"iso"' in result
    wait_idle(page)
    assert "browser_clock returned" in page.locator(".turn-assistant").last.inner_text()
    page.context.close()


def test_a_function_the_page_registers_answers_with_its_own_output(studio_server, browser, owner):
    schema = {"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]}
    make_agent(owner, client_tool(owner, "shout", "shout_text", schema))
    page = open_chat(browser, studio_server, "/chat/chat-helper/")
    page.evaluate(
        """async () => {
          const { registerClientTool } = await import('/static/js/lib/client_tools.js');
          registerClientTool('shout_text', ({text}) => ({text: text.toUpperCase() + '!'}));
        }"""
    )
    send(page, 'Use shout with {"text": "water the basil"}')
    page.wait_for_selector('.tool-card[data-tool-name="shout"][data-status="completed"]')
    result = page.locator(".tool-card[data-tool-name=shout] .tool-result").inner_text()
    assert '"text": "WATER THE BASIL!"' in result
    page.context.close()


def test_a_missing_browser_function_is_an_error_the_model_sees(studio_server, browser, owner):
    make_agent(owner, client_tool(owner, "scan_barcode", "scan_barcode"))
    page = open_chat(browser, studio_server, "/chat/chat-helper/")
    send(page, "Use scan_barcode")
    card = card_when(page, "scan_barcode", "failed")
    assert 'No client function named "scan_barcode"' in card.locator(".tool-result").inner_text()
    wait_idle(page)
    page.context.close()


def approval_agent(owner):
    agent = make_agent(owner, tool_named("weather_lookup"))
    AgentTool.objects.filter(agent=agent).update(requires_approval=True)
    return agent


def test_a_call_that_needs_approval_runs_once_approved(studio_server, browser, owner):
    approval_agent(owner)
    page = open_chat(browser, studio_server, "/chat/chat-helper/")
    send(page, "Use weather_lookup for Sydney")
    widget = widget_of(page, "weather_lookup", "approval")
    assert "Sydney" in widget.inner_text()
    page.screenshot(path="/tmp/chat-approval.png")
    widget.locator("button.approve").click()
    card = card_when(page, "weather_lookup", "completed")
    assert "Approved" in card.inner_text()
    assert '"conditions": "sunny"' in card.locator(".tool-result").inner_text()
    wait_idle(page)
    page.context.close()


def test_a_declined_call_gives_the_model_the_reason(studio_server, browser, owner):
    approval_agent(owner)
    page = open_chat(browser, studio_server, "/chat/chat-helper/")
    send(page, "Use weather_lookup for Sydney")
    widget = widget_of(page, "weather_lookup", "approval")
    widget.locator("textarea.reason").fill("Sydney is not on the list today")
    widget.locator("button.reject").click()
    card = card_when(page, "weather_lookup", "failed")
    assert "Declined: Sydney is not on the list today" in card.inner_text()
    assert "declined this call: Sydney is not on the list today" in card.inner_text()
    wait_idle(page)
    page.context.close()


def test_stop_ends_a_streaming_run_and_keeps_what_it_wrote(studio_server, browser, owner):
    make_agent(owner, providerOptions={"studio": {"delay": 0.25, "chunk_size": 4}})
    page = open_chat(browser, studio_server, "/chat/chat-helper/")
    warm_up(page)
    send(
        page,
        "Tell me slowly everything a gardener should know about tomatoes, basil, "
        "lemon trees, aphids, frost, watering, compost, sunlight and pruning",
    )
    page.wait_for_function(
        "() => (document.querySelector('.msg-text.streaming') || {}).textContent?.length > 10"
    )
    page.click("#stop-button")
    page.wait_for_selector('.turn-assistant[data-status="aborted"]')
    assert "Stopped" in page.locator(".turn-assistant .run-foot").inner_text()
    assert not page.locator("#composer-input").is_disabled()
    assert Run.objects.get().status == "aborted"
    kept = Message.objects.get(role="assistant").parts[0]["text"]
    assert kept and page.locator(".turn-assistant .msg-text").inner_text().startswith(
        kept.strip()[:10]
    )
    page.context.close()


def test_the_task_list_beside_the_chat_follows_the_task_tools(studio_server, browser, owner):
    make_agent(owner, tool_named("task_write"))
    page = open_chat(browser, studio_server, "/chat/chat-helper/")
    assert "no task list yet" in page.locator("#task-list").inner_text()
    send(page, "Use task_write to plan the vegetable garden")
    page.wait_for_selector("#task-list .task")
    tasks = page.locator("#task-list .task")
    assert tasks.count() == 1
    assert "plan the vegetable garden" in tasks.first.inner_text()
    assert tasks.first.get_attribute("data-status") == "pending"
    wait_idle(page)
    page.reload()
    page.wait_for_selector("#task-list .task")  # the list comes back with the history
    assert page.locator("#task-list .task").count() == 1
    page.context.close()


def test_a_card_that_joins_late_asks_for_the_partial_value_once(studio_server, browser, owner):
    make_agent(owner, note_tool(owner), providerOptions={"studio": {"delay": 0.2, "chunk_size": 4}})
    first = open_chat(browser, studio_server, "/chat/chat-helper/")
    warm_up(first)
    # The second viewer signs in now, so that it opens the thread while the call streams.
    late = browser_login(browser, studio_server, "owner")
    late.set_default_timeout(90_000)
    send(first, f'Call save_note with {{"text": "{LONG_NOTE}"}}')
    first.wait_for_function(
        """() => (document.querySelector('.arg[data-key="text"] .arg-value') || {})
                 .textContent?.length > 20"""
    )
    thread = Thread.objects.get()
    start = StreamEvent.objects.get(thread=thread, type="tool-input-start").seq
    # A second viewer opens the thread after the call's start: its card is late.
    late.goto(f"{studio_server}/chat/t/{thread.id}/?since={start + 1}")
    late.wait_for_selector(".since-banner")
    # While the argument still streams, the late card shows it from its first word (the
    # partial value) and never a repeated piece (only deltas after `asOf` applied).
    shown = late.wait_for_function(
        """() => {
          const card = document.querySelector('.tool-card[data-tool-name="save_note"]');
          const field = card && card.querySelector('.arg[data-key="text"] .arg-value');
          return card && card.dataset.status === 'streaming' && field ? field.textContent : null;
        }"""
    ).json_value()
    assert shown.startswith("Remember to water") and LONG_NOTE.startswith(shown)
    late.wait_for_selector('.tool-card[data-tool-name="save_note"][data-status="completed"]')
    card = late.locator(".tool-card[data-tool-name=save_note]")
    assert card.locator('.arg[data-key="text"] .arg-value').inner_text() == LONG_NOTE
    asked = late.evaluate("() => window.chatDebug.partialRequests")
    assert asked == 1
    late.context.close()
    first.context.close()


def unreachable_agent(owner) -> Agent:
    # A provider that cannot be reached: nothing listens on port 9.
    return Agent.objects.create(
        slug="unreachable",
        name="Unreachable",
        model="openai/gpt-4o-mini",
        owner=owner,
        source="studio",
        default_options={
            "modelSettings": {
                "apiBase": "http://127.0.0.1:9/v1",
                "apiKey": "test-key",
                "numRetries": 0,
            }
        },
    )


def test_a_model_error_ends_the_run_with_a_readable_message(transactional_db, browser, owner):
    # The operator lists the server, so the call is made; it fails: never a hung spinner.
    unreachable_agent(owner)
    with daphne_process(STUDIO_MODEL_API_BASES="http://127.0.0.1:9") as server:
        page = open_chat(browser, server, "/chat/unreachable/")
        send(page, "Hello")
        page.wait_for_selector('.turn-assistant[data-status="failed"]')
        note = page.locator(".turn-assistant .run-note-failed").inner_text()
        assert note.startswith("Run failed: The model provider")
        assert "openai/gpt-4o-mini" in note and "Connection error" in note
        assert not page.locator("#composer-input").is_disabled()
        assert page.locator("#run-pill").is_hidden()
        page.screenshot(path="/tmp/chat-model-error.png")
        page.context.close()


def test_a_base_the_operator_does_not_list_is_refused_with_the_field_named(
    studio_server, browser, owner
):
    unreachable_agent(owner)
    page = open_chat(browser, studio_server, "/chat/unreachable/")
    send(page, "Hello")
    error = page.locator("#composer-hint .error")
    error.wait_for()
    assert error.inner_text().startswith(
        "Could not send: agent.default_options.modelSettings.apiBase: http://127.0.0.1:9 is "
        "not a model server"
    )
    assert not Run.objects.exists()
    assert not page.locator("#composer-input").is_disabled()
    page.screenshot(path="/tmp/chat-model-base-refused.png")
    page.context.close()
