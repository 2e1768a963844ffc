"""What a person sees when the studio refuses bad input, in headless Chromium against a
real Daphne: the chat says why a message was refused and keeps working; the admin shows
a JSON field's problem with its path."""

from __future__ import annotations

import json
import os

import pytest

from agents_core.models import Message
from tests.conftest import browser_login
from tests.frontend.test_chat import make_agent, open_chat, send, wait_idle

pytestmark = [
    pytest.mark.browser,
    pytest.mark.django_db(transaction=True),
    pytest.mark.timeout(300),
]

SHOTS = os.environ.get("STUDIO_SCREENSHOTS", "")


def shot(page, name: str) -> None:
    """Screenshots for a person to look at while developing (STUDIO_SCREENSHOTS=dir)."""
    if SHOTS:
        page.screenshot(path=os.path.join(SHOTS, f"{name}.png"), full_page=True)


def test_a_chat_message_over_the_limit_is_refused_by_the_composer_and_the_chat_goes_on(
    studio_server, browser, owner
):
    make_agent(owner)
    page = open_chat(browser, studio_server, "/chat/chat-helper/")
    send(page, "hello")
    wait_idle(page)
    page.wait_for_function("() => document.querySelector('#conn-pill').textContent === 'live'")

    # 300,000 characters: over STUDIO_MAX_STRING_CHARS, sent on the open websocket.
    page.evaluate("() => { document.querySelector('#composer-input').value = 'x'.repeat(300000); }")
    page.press("#composer-input", "Enter")
    hint = page.locator("#composer-hint .error")
    hint.wait_for()
    shot(page, "chat-refused-message")

    assert "the string is 300000 characters long; the limit is 262144" in hint.inner_text()
    assert page.locator(".is-failed").count() == 1
    send(page, "and now a short one")
    # Its answer, the second of the thread, comes once the server has stored it (the
    # user's turn shows before that, and the chat is idle until its run starts).
    page.wait_for_function(
        "() => document.querySelector('#chat-app').dataset.run === 'idle'"
        " && document.querySelectorAll('.turn-assistant').length >= 2",
        timeout=90_000,
    )
    texts = [
        p[0]["text"] for p in Message.objects.filter(role="user").values_list("parts", flat=True)
    ]
    assert texts == ["hello", "and now a short one"]


def test_the_admin_shows_a_json_fields_problem_with_its_path(studio_server, browser, admin_user):
    page = browser_login(browser, studio_server, "admin")
    page.goto(f"{studio_server}/admin/agents_core/agent/add/")
    page.fill("input[name=slug]", "deep-admin")
    page.fill("input[name=name]", "Deep")
    page.fill("input[name=model]", "studio/scripted")
    page.fill("textarea[name=instructions]", json.dumps("Be brief."))
    page.evaluate(
        """() => { document.querySelector('textarea[name=metadata]').value =
             '{"a": ' + '['.repeat(100000) + ']'.repeat(100000) + '}'; }"""
    )
    page.fill("textarea[name=notification_policy]", '{"note": "a\\u0000b"}')
    page.click("input[name=_save]")
    page.wait_for_selector(".errornote")
    shot(page, "admin-json-errors")

    errors = page.locator(".errorlist").all_inner_texts()
    assert any("nested more than 64 levels" in e for e in errors), errors
    assert any("$.note: the string contains a NUL" in e for e in errors), errors
