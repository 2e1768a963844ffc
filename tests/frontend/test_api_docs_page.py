"""The API docs page (/api/docs/) as a signed-in user reads it in Chromium."""

from __future__ import annotations

import pytest

from tests.conftest import browser_login

pytestmark = pytest.mark.django_db


@pytest.mark.browser
def test_a_signed_in_user_reads_the_api_docs_in_a_browser(studio_server, browser, owner):
    page = browser_login(browser, studio_server, "owner")

    page.goto(f"{studio_server}/api/docs/")
    page.locator(".opblock-tag", has_text="agents").first.wait_for()
    page.screenshot(path="/tmp/api-docs.png")
    # Swagger UI draws the sections near the viewport only: scroll down through the page,
    # noting the tags drawn, until the operation looked for is drawn.
    wanted = page.locator(".opblock-summary-path", has_text="/api/agents/{slug}/tools/")
    tags: set[str] = set()
    for _ in range(300):
        tags.update(text.strip() for text in page.locator(".opblock-tag").all_inner_texts())
        if wanted.count():
            break
        page.mouse.wheel(0, 400)
        page.wait_for_timeout(30)
    wanted.first.wait_for()
    assert "agents" in tags
    for _ in range(300):
        tags.update(text.strip() for text in page.locator(".opblock-tag").all_inner_texts())
        if "tools" in tags:
            break
        page.mouse.wheel(0, 400)
        page.wait_for_timeout(30)
    assert "tools" in tags
    page.context.close()
