"""The preview chat page in headless Chromium against a real Daphne server, the offline
model `studio/scripted` (slowed down per chunk so that intermediate states are visible),
PostgreSQL, Redis and, for async tools, a real Celery worker."""

from __future__ import annotations

import re

import httpx
import pytest

from agents_core.models import Agent, AgentTool, Message, Run, Thread
from tests.conftest import browser_login
from tools_app.models import Tool

# A fresh server's first run imports litellm (tens of seconds on a busy machine).
pytestmark = [
    pytest.mark.browser,
    pytest.mark.django_db(transaction=True),
    pytest.mark.timeout(300),
]

# Seconds between the offline model's chunks, and characters per argument chunk.
SLOW = {"providerOptions": {"studio": {"delay": 0.06, "chunk_size": 4}}}
LONG_NOTE = (
    "Remember to water the tomatoes every morning, check the basil for aphids, and move "
    "the lemon tree inside before the first frost arrives in October."
)


def make_agent(owner, *tools: Tool, slug: str = "chat-helper", **options) -> Agent:
    agent = Agent.objects.create(
        slug=slug,
        name="Chat helper",
        model="studio/scripted",
        owner=owner,
        source="studio",
        instructions="Be brief.",
        default_options={**SLOW, **options},
    )
    for position, tool in enumerate(tools):
        AgentTool.objects.create(agent=agent, tool=tool, key=tool.name, position=position)
    return agent


def python_tool(owner, name: str, code: str, schema: dict, *, mode: str = "sync") -> Tool:
    return Tool.objects.create(
        name=name,
        description=f"{name} for the chat tests.",
        kind="python",
        input_schema=schema,
        execution_mode=mode,
        config={"code": code},
        owner=owner,
        timeout_seconds=30,
    )


def note_tool(owner) -> Tool:
    return python_tool(
        owner,
        "save_note",
        'return {"saved": len(input["text"])}',
        {"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]},
    )


def tool_named(name: str) -> Tool:
    return Tool.objects.get(name=name)


def open_chat(browser, server: str, path: str):
    page = browser_login(browser, server, "owner")
    logs = []
    page.on("console", lambda m: logs.append(f"{m.type}: {m.text}"))
    page.on("pageerror", lambda e: logs.append(f"pageerror: {e}"))
    page.chat_logs = logs
    # The first run of a fresh server imports litellm (seconds on a busy machine).
    page.set_default_timeout(90_000)
    page.goto(f"{server}{path}")
    page.wait_for_selector("#conn-pill", state="attached")
    return page


def warm_up(page) -> None:
    """Run one message on a scratch thread, then delete it. The first run of a fresh server
    imports litellm, which holds the server's event loop for seconds (see docs/protocol.md,
    "Requests from chat-ui"): tests that assert what is visible *while* a run streams do
    this first, so that the stream they watch runs at the offline model's pace."""
    page.evaluate(
        """async () => {
          const { api } = await import('/static/js/lib/api.js');
          const thread = await api('/api/threads/', {method: 'POST',
                                   body: {agent: 'weather-assistant', title: 'warm-up'}});
          await api(`/api/threads/${thread.id}/runs/`, {method: 'POST', body: {message: 'hi'}});
          while ((await api(`/api/threads/${thread.id}/`)).activeRun) {
            await new Promise((resolve) => setTimeout(resolve, 200));
          }
          await api(`/api/threads/${thread.id}/`, {method: 'DELETE'});
        }"""
    )


def widget_of(page, tool: str, kind: str):
    """The open widget of a suspended call (kind: ask, plan, approval)."""
    widget = page.locator(f".tool-card[data-tool-name={tool}] form.widget-{kind}")
    widget.wait_for()
    return widget


def card_when(page, tool: str, status: str):
    """The card of a call, once it has reached a status."""
    page.wait_for_selector(f'.tool-card[data-tool-name="{tool}"][data-status="{status}"]')
    return page.locator(f".tool-card[data-tool-name={tool}]")


def send(page, text: str) -> None:
    page.fill("#composer-input", text)
    page.press("#composer-input", "Enter")


def wait_idle(page, timeout: float = 90_000) -> None:
    page.wait_for_function(
        "() => document.querySelector('#chat-app').dataset.run === 'idle'"
        " && document.querySelectorAll('.turn-assistant').length > 0",
        timeout=timeout,
    )


def assistant_text(page) -> str:
    return " ".join(page.locator(".turn-assistant .msg-text").all_inner_texts())


def squash(text: str) -> str:
    return re.sub(r"\s+", " ", text).strip()


def test_a_message_streams_back_token_by_token(studio_server, browser, owner):
    make_agent(owner)
    page = open_chat(browser, studio_server, "/chat/chat-helper/")
    warm_up(page)
    message = "Tell me what you can do for a gardener who grows tomatoes and basil"
    send(page, message)
    # While the run streams: the composer is locked, and the text is a growing prefix.
    partial = page.wait_for_function(
        """() => {
          const seg = document.querySelector('.turn-assistant .msg-text.streaming');
          return seg && seg.textContent.length > 5 ? seg.textContent : null;
        }"""
    ).json_value()
    assert page.locator("#composer-input").is_disabled()
    assert page.locator("#stop-button").is_visible()
    wait_idle(page)
    final = assistant_text(page)
    assert squash(final).startswith(squash(partial))
    assert len(final) > len(partial)
    assert "gardener who grows tomatoes" in final
    # The user's bubble, the thread in the URL and in the list.
    assert page.locator(".turn-user .bubble").inner_text() == message
    thread = Thread.objects.get(owner=owner)
    assert page.url.endswith(f"/chat/t/{thread.id}/")
    page.wait_for_selector(f'.thread-item[data-thread-id="{thread.id}"]')
    assert not page.locator("#composer-input").is_disabled()
    page.screenshot(path="/tmp/chat-text.png")
    page.context.close()


def test_a_tool_card_fills_its_argument_before_the_call_completes(studio_server, browser, owner):
    make_agent(owner, note_tool(owner))
    page = open_chat(browser, studio_server, "/chat/chat-helper/")
    warm_up(page)
    send(page, f'Call save_note with {{"text": "{LONG_NOTE}"}}')
    # An intermediate state: the card is still streaming and shows part of the text.
    partial = page.wait_for_function(
        """() => {
          const card = document.querySelector('.tool-card[data-tool-name="save_note"]');
          if (!card || card.dataset.status !== 'streaming') return null;
          const field = card.querySelector('.arg[data-key="text"] .arg-value');
          return field && field.textContent.length > 10 ? field.textContent : null;
        }"""
    ).json_value()
    assert LONG_NOTE.startswith(partial)
    assert len(partial) < len(LONG_NOTE)
    page.screenshot(path="/tmp/chat-tool-streaming.png")
    card = page.locator('.tool-card[data-tool-name="save_note"]')
    page.wait_for_selector('.tool-card[data-tool-name="save_note"][data-status="completed"]')
    assert card.locator('.arg[data-key="text"] .arg-value').inner_text() == LONG_NOTE
    assert f'"saved": {len(LONG_NOTE)}' in card.locator(".tool-result").inner_text()
    wait_idle(page)
    page.context.close()


def test_the_user_answers_ask_user_in_place_and_the_run_continues(studio_server, browser, owner):
    make_agent(owner, tool_named("ask_user"))
    page = open_chat(browser, studio_server, "/chat/chat-helper/")
    send(page, "Ask me which city I live in")
    widget = widget_of(page, "ask_user", "ask")
    assert "Which city I live in?" in widget.locator(".widget-title").inner_text()
    assert page.locator("#composer-input").is_disabled()  # no auto-resume: answer the card
    page.screenshot(path="/tmp/chat-ask-user.png")
    widget.locator("textarea[name=answer]").fill("Lisbon")
    widget.locator("button[type=submit]").click()
    page.wait_for_selector('.tool-card[data-tool-name="ask_user"][data-status="completed"]')
    card = page.locator('.tool-card[data-tool-name="ask_user"]')
    assert "You answered: Lisbon" in card.inner_text()
    assert '"answer": "Lisbon"' in card.locator(".tool-result").inner_text()
    wait_idle(page)
    assert "Lisbon" in assistant_text(page)
    assert Run.objects.get().status == "completed"
    page.context.close()


def test_the_user_approves_a_plan(studio_server, browser, owner):
    make_agent(owner, tool_named("submit_plan"))
    page = open_chat(browser, studio_server, "/chat/chat-helper/")
    send(page, "Make a plan to repot the lemon tree")
    widget = widget_of(page, "submit_plan", "plan")
    assert "repot the lemon tree" in widget.inner_text()
    page.screenshot(path="/tmp/chat-plan.png")
    widget.locator("button.approve").click()
    card = card_when(page, "submit_plan", "completed")
    assert "Plan approved" in card.inner_text()
    assert '"approved": true' in card.locator(".tool-result").inner_text()
    wait_idle(page)
    page.context.close()


def test_rejecting_a_plan_needs_a_reason_the_model_then_reads(studio_server, browser, owner):
    make_agent(owner, tool_named("submit_plan"))
    page = open_chat(browser, studio_server, "/chat/chat-helper/")
    send(page, "Make a plan to repot the lemon tree")
    widget = widget_of(page, "submit_plan", "plan")
    widget.locator("button.reject").click()
    assert "Say why" in widget.locator(".widget-error").inner_text()
    widget.locator("textarea.reason").fill("Wait until spring")
    widget.locator("button.reject").click()
    page.wait_for_selector('.tool-card[data-tool-name="submit_plan"][data-status="completed"]')
    assert "Plan rejected: Wait until spring" in page.locator(".tool-card").inner_text()
    wait_idle(page)
    assert "Wait until spring" in assistant_text(page)
    page.context.close()


@pytest.mark.celery_worker
def test_an_async_tool_shows_pending_then_its_result(studio_server, celery_worker, browser, owner):
    adder = python_tool(
        owner,
        "add_numbers",
        'return {"sum": input["a"] + input["b"]}',
        {
            "type": "object",
            "properties": {"a": {"type": "number"}, "b": {"type": "number"}},
            "required": ["a", "b"],
        },
        mode="async",
    )
    make_agent(owner, adder)
    page = open_chat(browser, studio_server, "/chat/chat-helper/")
    # A real worker may finish before a poll of the page would see "pending": record every
    # status the card takes, as the page sets it, and check the order afterwards.
    page.evaluate(
        """() => {
          window.cardStatuses = [];
          new MutationObserver((records) => {
            for (const record of records) {
              const el = record.target;
              if (el.matches?.('.tool-card[data-tool-name="add_numbers"]')) {
                window.cardStatuses.push(el.dataset.status);
              }
            }
          }).observe(document.body, {subtree: true, attributes: true,
                                     attributeFilter: ["data-status"]});
        }"""
    )
    send(page, 'Use add_numbers with {"a": 20, "b": 22}')
    card = page.locator(".tool-card[data-tool-name=add_numbers]")
    page.wait_for_selector(
        '.tool-card[data-tool-name="add_numbers"][data-status="completed"]', timeout=120_000
    )
    statuses = page.evaluate("() => window.cardStatuses")
    assert "pending" in statuses, statuses
    assert statuses.index("pending") < len(statuses) - 1 - statuses[::-1].index("completed")
    assert '"sum": 42' in card.locator(".tool-result").inner_text()
    assert "completed (async)" in card.locator(".tool-status").inner_text()
    page.context.close()


def test_a_reload_mid_stream_keeps_the_conversation_intact(studio_server, browser, owner):
    make_agent(owner, note_tool(owner))
    page = open_chat(browser, studio_server, "/chat/chat-helper/")
    warm_up(page)
    send(page, f'Call save_note with {{"text": "{LONG_NOTE}"}} and tell me about it')
    page.wait_for_selector('.tool-card[data-tool-name="save_note"][data-status="streaming"]')
    page.reload()
    wait_idle(page)
    # Exactly one user bubble, one card with the whole argument, and the text as stored.
    assert page.locator(".turn-user").count() == 1
    assert page.locator(".tool-card").count() == 1
    card = page.locator(".tool-card")
    assert card.locator('.arg[data-key="text"] .arg-value').inner_text() == LONG_NOTE
    assert card.get_attribute("data-status") == "completed"
    stored = " ".join(
        part["text"]
        for message in Message.objects.filter(role="assistant").order_by("id")
        for part in message.parts
        if part.get("type") == "text"
    )
    assert squash(assistant_text(page)) == squash(stored)
    seqs = page.evaluate("() => window.chatStream.lastSeq")
    assert seqs == Thread.objects.get().last_seq
    page.context.close()


def test_a_lost_connection_resumes_from_the_last_event_without_duplicates(
    studio_server, browser, owner
):
    make_agent(owner)
    page = open_chat(browser, studio_server, "/chat/chat-helper/")
    warm_up(page)
    send(page, "Describe in a few words how a tomato plant grows from seed to fruit in summer")
    page.wait_for_selector(".turn-assistant .msg-text.streaming")
    page.evaluate("() => window.chatStream.dropConnection()")
    page.wait_for_function("() => window.chatStream.stats.reconnects >= 1")
    wait_idle(page)
    text = squash(assistant_text(page))
    stored = squash(Message.objects.filter(role="assistant").get().parts[0]["text"])
    assert text == stored
    assert page.locator("#conn-pill").get_attribute("data-state") == "open"
    page.context.close()


def test_the_stream_fills_a_gap_from_the_real_events_endpoint(studio_server, browser, owner):
    make_agent(owner)
    page = open_chat(browser, studio_server, "/chat/chat-helper/")
    send(page, "Hello there, how are you today")
    wait_idle(page)
    thread = Thread.objects.get()
    result = page.evaluate(
        """async (threadId) => {
          const { ThreadStream } = await import('/static/js/lib/stream.js');
          const url = `/api/threads/${threadId}/events/`;
          const all = await (await fetch(`${url}?after=0`)).json();
          const events = Array.isArray(all) ? all : (all.events || all.results);
          const delivered = [];
          const stream = new ThreadStream({wsUrl: 'ws://unused/', eventsUrl: url,
            onEvent: (e) => delivered.push(e.seq)});
          // The first two, a duplicate, then a jump over the middle: a gap to fetch.
          const last = events.length - 1;
          for (const e of [events[0], events[1], events[1], events[last]]) stream.ingest(e);
          while (stream.hasGap || stream.filling) await new Promise((r) => setTimeout(r, 20));
          return {delivered, count: events.length};
        }""",
        str(thread.id),
    )
    assert result["delivered"] == list(range(1, result["count"] + 1))
    assert result["count"] == thread.last_seq
    page.context.close()


def test_a_code_defined_agent_works_on_the_same_page(studio_server, browser, owner):
    page = open_chat(browser, studio_server, "/chat/weather-assistant/")
    page.fill("#composer-input", "Use weather_lookup for Tokyo")
    page.click("#send-button")
    card = page.locator(".tool-card[data-tool-name=weather_lookup]")
    page.wait_for_selector('.tool-card[data-tool-name="weather_lookup"][data-status="completed"]')
    assert card.locator('.arg[data-key="city"] .arg-value').inner_text() == "Tokyo"
    assert '"conditions": "clear"' in card.locator(".tool-result").inner_text()
    wait_idle(page)
    page.screenshot(path="/tmp/chat-code-agent.png")
    page.context.close()


def test_the_chat_page_hides_other_users_threads_and_needs_a_sign_in(
    studio_server, owner, outsider
):
    agent = Agent.objects.get(slug="weather-assistant")
    theirs = Thread.objects.create(agent=agent, owner=outsider, resource_id=str(outsider.id))
    with httpx.Client(base_url=studio_server) as client:
        assert client.get("/chat/").status_code == 302
        assert client.get(f"/chat/t/{theirs.id}/").status_code == 302
        client.get("/accounts/login/")
        client.post(
            "/accounts/login/",
            data={
                "username": "owner",
                "password": "password",
                "csrfmiddlewaretoken": client.cookies["csrftoken"],
            },
        )
        assert client.get("/chat/").status_code == 200
        assert client.get(f"/chat/t/{theirs.id}/").status_code == 404
        assert client.get("/chat/no-such-agent/").status_code == 404
