"""The chat's first-run details in headless Chromium: the Planner demo's question stopped
with Stop says so, the thread is titled by a summary and renamed, the side column opens
on a narrow screen, and the navigation's Inbox link leads to it."""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

from agents_core.models import Thread
from agents_core.registry import definitions_sync
from tests.frontend.test_chat import card_when, open_chat, send, widget_of

pytestmark = [
    pytest.mark.browser,
    pytest.mark.django_db(transaction=True),
    pytest.mark.timeout(300),
]


@pytest.fixture
def synced(transactional_db):
    definitions_sync()


def test_stop_on_a_pending_question_then_the_title_and_a_rename(
    studio_server, browser, owner, synced
):
    page = open_chat(browser, studio_server, "/chat/task-planner/")
    send(page, "Hello! Could you ask me which city to visit?")
    widget_of(page, "ask_user", "ask")
    expect(page.locator("#chat-title")).to_have_text("Ask me which city to visit")

    page.click("#stop-button")
    card = card_when(page, "ask_user", "failed")
    expect(card).to_contain_text("Stopped: the run was stopped before this was answered.")
    expect(card.locator("form.widget-ask")).to_have_count(0)
    expect(page.locator(".turn").last).to_contain_text("Stopped while waiting for an answer")

    page.once("dialog", lambda dialog: dialog.accept("City choice"))
    page.click("#rename-thread")
    expect(page.locator("#chat-title")).to_have_text("City choice")
    assert Thread.objects.get(owner=owner).title == "City choice"
    expect(page.locator("#thread-list")).to_contain_text("City choice")


def test_the_side_column_opens_on_a_narrow_screen_and_the_inbox_link_leads_there(
    studio_server, browser, owner, synced
):
    page = open_chat(browser, studio_server, "/chat/task-planner/")
    page.set_viewport_size({"width": 800, "height": 900})
    expect(page.locator("#chat-aside")).to_be_hidden()
    page.click("#side-toggle")
    expect(page.locator("#task-panel")).to_be_visible()
    expect(page.locator("#inbox-panel")).to_be_visible()
    page.click("#side-close")
    expect(page.locator("#chat-aside")).to_be_hidden()

    page.click("#nav-inbox")
    page.wait_for_url("**/chat/#inbox-panel")
    expect(page.locator("#inbox-panel")).to_be_visible()
    expect(page.locator("#side-toggle")).to_have_attribute("aria-expanded", "true")
