"""The chat page's signals and inbox in headless Chromium, against a real Daphne server
running the offline model slowed down per chunk. (Named to run after the async tests of
this folder: the session's Playwright keeps an event loop running in the main thread.)"""

from __future__ import annotations

import pytest

from agents_core.models import Agent, AgentTool, NotificationRecord, Run, Signal
from tests.conftest import browser_login

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

# One argument character per chunk: the first step streams for seconds, the window in
# which the test sends its notification; text words come at the same pace.
SLOW = {"providerOptions": {"studio": {"delay": 0.25, "chunk_size": 1}}, "maxSteps": 4}


@pytest.fixture
def slow_agent(owner):
    from agents_core.registry import definitions_sync, reset_registry
    from tools_app.models import Tool

    reset_registry()
    definitions_sync()
    agent = Agent.objects.create(
        slug="inbox-helper",
        name="Inbox helper",
        model="studio/scripted",
        owner=owner,
        source="studio",
        instructions="Be brief.",
        default_options=SLOW,
    )
    AgentTool.objects.create(
        agent=agent, tool=Tool.objects.get(name="weather_lookup"), key="weather_lookup"
    )
    return agent


def open_chat(browser, server, path):
    page = browser_login(browser, server, "owner")
    errors = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.page_errors = errors
    page.goto(f"{server}{path}")
    return page


@pytest.mark.timeout(300)
def test_a_high_notification_during_a_streaming_run_shows_a_summary_now_and_the_full_one_after(
    studio_server, browser, slow_agent
):
    page = open_chat(browser, studio_server, "/chat/inbox-helper/")
    page.fill("#composer-input", "use weather_lookup for Paris")
    page.press("#composer-input", "Enter")
    # The run is streaming its first step when the notification arrives.
    # The first model call of a fresh server imports litellm (seconds on a busy machine).
    page.wait_for_selector(".turn-assistant .msg-text", timeout=120_000)
    page.wait_for_selector("#inbox-body form.inbox-form")
    form = page.locator("#inbox-body form.inbox-form")
    form.locator("input[name=source]").fill("pager")
    form.locator("select[name=priority]").select_option("high")
    form.locator("input[name=summary]").fill('Database "db1" is <down>')
    form.locator("details.inbox-more summary").click()
    form.locator("textarea[name=payload]").fill('{"host": "db1", "since": "10:02"}')
    form.locator("button[type=submit]").click()

    page.wait_for_selector(".inbox-say[data-decision='summary']")
    summary = page.locator(".turn-assistant .sig-card.sig-summary")
    summary.wait_for()
    assert summary.locator(".sig-body").inner_text() == 'Database "db1" is <down>'
    assert "delivery=summary" in summary.locator(".sig-attrs").inner_text().replace("\n", "")
    assert "pager" in summary.locator(".sig-attrs").inner_text()
    # The full notification waits, queued, for the run to end.
    assert page.locator(".sig-card.sig-notification").get_attribute("data-status") == "queued"
    page.screenshot(path="/tmp/signals-summary.png")

    # Delivered into the run before its next model call; then, once the run is over,
    # the full notification wakes the agent.
    page.wait_for_selector(".sig-card.sig-summary[data-status='delivered']", timeout=60_000)
    full = page.locator(".sig-card.sig-notification[data-status='delivered']")
    full.wait_for(timeout=60_000)
    assert '"host": "db1"' in full.locator(".sig-body").inner_text()
    assert "woke the agent" in full.locator(".sig-foot").inner_text()
    page.wait_for_selector(".inbox-item[data-status='delivered']", timeout=30_000)
    page.wait_for_function(
        "() => document.querySelectorAll('.turn-assistant').length === 2"
        " && document.querySelector('#chat-app').dataset.run === 'idle'",
        timeout=60_000,
    )
    page.screenshot(path="/tmp/signals-full.png")

    first, second = Run.objects.order_by("created_at")
    summary_signal = Signal.objects.get(metadata__delivery="summary")
    assert summary_signal.delivered_in_run_id == first.id
    full_signal = Signal.objects.get(metadata__delivery="full")
    assert (full_signal.decision, full_signal.delivered_in_run_id) == ("wake", second.id)
    assert NotificationRecord.objects.get().status == "delivered"
    assert page.page_errors == []
    page.context.close()


def test_the_inbox_coalesces_digests_without_waking_and_edits_the_agents_policy(
    studio_server, browser, slow_agent, owner
):
    from agents_core.models import Thread

    thread = Thread.objects.create(
        agent=slow_agent, owner=owner, resource_id=str(owner.pk), title="Inbox only"
    )
    page = open_chat(browser, studio_server, f"/chat/t/{thread.id}/")
    form = page.locator("#inbox-body form.inbox-form")
    form.wait_for()
    form.locator("details.inbox-more summary").click()
    for n in (1, 2, 3):
        form.locator("input[name=source]").fill("github")
        form.locator("select[name=priority]").select_option("low")
        form.locator("input[name=summary]").fill(f"comment {n} on PR 7")
        form.locator("input[name=coalesceKey]").fill("pr-7")
        form.locator("textarea[name=attributes]").fill('{"repo": "studio", "pr": 7}')
        form.locator("button[type=submit]").click()
        page.wait_for_selector(f".inbox-item .inbox-summary:text-is('comment {n} on PR 7')")
    assert "kept for the digest (merged: coalesce)" in page.locator(".inbox-say").inner_text()
    item = page.locator(".inbox-item")
    assert item.count() == 1
    assert item.locator(".inbox-times").inner_text() == "×3"
    assert page.locator(".inbox-count[data-status='pending'] .n").inner_text() == "1"

    page.click("button.inbox-digest")
    digest = page.locator(".sig-card.sig-digest[data-status='persisted']")
    digest.wait_for()
    assert "comment 3 on PR 7 (x3)" in digest.locator(".sig-body").inner_text()
    assert "count=3" in digest.locator(".sig-attrs").inner_text().replace("\n", "")
    page.wait_for_selector(".inbox-count[data-status='digested'] .n:text-is('1')")
    assert not thread.runs.exists()  # a low digest on an idle thread does not wake it

    page.click(".inbox-policy summary")
    page.select_option(".policy-table select[name='low.idle']", "now")
    # Rules for one source: only what is chosen is saved; the rest goes by priority.
    page.fill("input[name=policy-source]", "github")
    page.click("button.policy-source-add")
    github = page.locator(".policy-source[data-source='github']")
    github.locator("select[name='low.active']").select_option("now")
    github.locator("select[name='high.idle']").select_option("persist")
    page.fill("input[name=policy-source]", "pager")
    page.click("button.policy-source-add")
    page.locator(".policy-source[data-source='pager'] .policy-source-remove").click()
    page.click(".policy-actions button")
    page.wait_for_selector(".policy-status:text-is('Saved.')")
    page.screenshot(path="/tmp/signals-inbox.png", full_page=True)
    slow_agent.refresh_from_db()
    assert slow_agent.notification_policy["priority"]["low"] == {"active": "digest", "idle": "now"}
    assert slow_agent.notification_policy["source"] == {
        "github": {"low": {"active": "now"}, "high": {"idle": "persist"}}
    }
    # Rendered again from what was saved.
    saved = page.locator(".policy-source[data-source='github']")
    assert saved.locator("select[name='low.active']").input_value() == "now"
    assert saved.locator("select[name='low.idle']").input_value() == ""
    assert page.locator(".policy-source[data-source='pager']").count() == 0
    assert page.page_errors == []
    page.context.close()
