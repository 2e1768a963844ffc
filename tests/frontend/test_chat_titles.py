"""The chat's thread list and heading show the title the model makes from a thread's first
exchange without a reload: a real Celery worker runs the title task while the page stays
open (Daphne, the offline model, headless Chromium)."""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

from agents_core.models import Thread
from agents_core.registry import definitions_sync
from tests.frontend.test_chat import open_chat, send, wait_idle

pytestmark = [
    pytest.mark.browser,
    pytest.mark.django_db(transaction=True),
    pytest.mark.timeout(300),
]


@pytest.fixture
def synced(transactional_db):
    definitions_sync()


def test_the_thread_list_shows_the_generated_title_without_reload(
    studio_server, celery_worker, browser, owner, synced
):
    page = open_chat(browser, studio_server, "/chat/weather-assistant/")
    send(page, "Hi! Please tell me about the weather in Paris and Lyon")
    wait_idle(page)

    # The worker imports litellm on its first task: seconds on a busy machine.
    expect(page.locator("#chat-title")).to_have_text("Weather Paris Lyon", timeout=90_000)
    expect(page.locator("#thread-list")).to_contain_text("Weather Paris Lyon")
    assert Thread.objects.get(owner=owner).title == "Weather Paris Lyon"
    assert not [line for line in page.chat_logs if line.startswith("pageerror")]
