"""The test console and the chat's tool card say when a run waits for a sandbox slot, and
why, until it runs: the user's share of the sandbox service's pool is held by runs
another caller sent. Headless Chromium against a real Daphne process and the real
sandbox service."""

from __future__ import annotations

import asyncio
import json
import threading
from collections.abc import Iterator

import pytest

from tests.conftest import daphne_process
from tests.frontend.test_chat import card_when, make_agent, open_chat, python_tool, send, warm_up
from tests.frontend.test_tool_console_isolation import doubler, open_console, shot
from tests.tools_app.engine.sandbox_service import ServiceProcess, sandbox_service, share_held
from tests.tools_app.engine.test_python_fair_shares import SHARE_NOTE

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]
__all__ = ["doubler"]  # the fixture, used by name


def hold_share(service: ServiceProcess, tenant: str, seconds: float) -> threading.Thread:
    """share_held from a thread of its own (the page's test is synchronous): returns once
    the user's share is held, while the runs go on for `seconds`."""
    held = threading.Event()

    async def hold() -> None:
        runs = await share_held(service, tenant, seconds)
        held.set()
        await asyncio.gather(*runs)

    thread = threading.Thread(target=asyncio.run, args=(hold(),), daemon=True)
    thread.start()
    assert held.wait(60), "none of the three runs waited"
    return thread


@pytest.fixture
def served() -> Iterator[tuple[ServiceProcess, str]]:
    with sandbox_service("--owner-slots", "2", "--spares", "0") as service:
        env = {"STUDIO_SANDBOX_URL": service.url, "STUDIO_SANDBOX_TOKEN": service.token}
        with daphne_process(**env) as url:
            yield service, url


def test_the_console_shows_a_run_waiting_for_a_sandbox_slot(served, browser, doubler, owner):
    service, url = served
    page = open_console(browser, url)
    holder = hold_share(service, f"user:{owner.pk}", 15)

    page.fill("#console-form input[name='$.n']", "21")
    page.click("#console-send")
    waiting = page.wait_for_selector("#console-waiting", timeout=30000)
    assert waiting.inner_text().strip() == SHARE_NOTE
    assert page.locator("#console-send").inner_text() == "Waiting for a slot…"
    shot(page, "console-waiting")
    page.wait_for_selector("#console-status[data-status='completed']", timeout=60000)

    assert json.loads(page.locator("#console-output").inner_text()) == {"double": 42}
    assert page.locator("#console-waiting").count() == 0
    page.context.close()
    holder.join(60)


def test_the_chat_card_shows_a_call_waiting_for_a_sandbox_slot(served, browser, owner):
    service, url = served
    schema = {"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]}
    make_agent(owner, python_tool(owner, "py_double", "return input['n'] * 2", schema))
    page = open_chat(browser, url, "/chat/chat-helper/")
    warm_up(page)  # the server's first run imports litellm: before the share is held
    holder = hold_share(service, f"user:{owner.pk}", 20)

    send(page, 'use py_double with {"n": 21}')
    card_status = '.tool-card[data-tool-name="py_double"] .tool-status'
    page.wait_for_function(
        """(selector) => {
          const status = document.querySelector(selector);
          return status && status.textContent === 'waiting for a sandbox slot';
        }""",
        arg=card_status,
        timeout=60_000,
    )
    status = page.locator(card_status)
    assert status.get_attribute("title") == SHARE_NOTE
    shot(page, "chat-waiting")
    card = card_when(page, "py_double", "completed")

    assert "42" in card.inner_text()
    assert status.get_attribute("title") == ""
    page.context.close()
    holder.join(60)
