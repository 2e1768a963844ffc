"""Settings → Web search in headless Chromium against Daphne: a SearXNG instance (a local
server on 127.0.0.1, on the Daphne process's allow-list) saved and tried (a result that is
not an http(s) page is dropped), a Brave key saved write-only, and a missing URL refused
at its field."""

from __future__ import annotations

import os

import pytest

from tests.conftest import browser_login, daphne_process
from tests.tools_app.engine.conftest import LocalServer
from tools_app.models import WebSearchSetting

pytestmark = [
    pytest.mark.browser,
    pytest.mark.django_db(transaction=True),
    pytest.mark.timeout(180),
]
SHOTS = os.environ.get("STUDIO_SCREENSHOTS", "")


@pytest.fixture
def searxng():
    server = LocalServer()
    server.route(
        "/search",
        body={
            "results": [
                {
                    "title": "Django Channels",
                    "url": "https://channels.readthedocs.io/",
                    "content": "WebSockets for Django",
                },
                {"title": "<b>Daphne</b>", "url": "javascript:alert(1)", "content": "ASGI server"},
            ]
        },
    )
    yield server
    server.stop()


def test_a_user_sets_a_searxng_instance_and_tries_it(browser, owner, searxng, transactional_db):
    with daphne_process(STUDIO_PRIVATE_NETWORKS=f"127.0.0.1:{searxng.port}") as server:
        page = browser_login(browser, server, "owner")
        page.click("#nav-settings")
        page.wait_for_selector("#web-search-current:has-text('None configured')")
        page.select_option("#web-search-provider", "searxng")
        page.click("#web-search-form button[type=submit]")
        page.wait_for_selector("#web-search-errors:not([hidden])")
        assert "$.base_url" in page.inner_text("#web-search-errors")

        page.fill("#web-search-form input[name=base_url]", searxng.url)
        page.click("#web-search-form button[type=submit]")
        page.wait_for_selector("#web-search-current:has-text('Yours')")
        assert WebSearchSetting.objects.get(owner=owner).base_url == searxng.url

        page.fill("#web-search-try input[name=query]", "django channels")
        page.click("#web-search-try button[type=submit]")
        page.wait_for_selector(".search-result")
        items = page.locator(".search-result")
        assert items.count() == 1  # the javascript: result is not a web page: dropped
        assert items.first.locator("a").get_attribute("href") == "https://channels.readthedocs.io/"
        assert items.first.locator("a").inner_text() == "Django Channels"
        if SHOTS:
            page.screenshot(path=os.path.join(SHOTS, "settings-web-search.png"), full_page=True)

        page.select_option("#web-search-provider", "brave")
        page.fill("#web-search-form input[name=base_url]", "")
        page.fill("#web-search-form input[name=api_key]", "BSA-secret-value-1234")
        page.click("#web-search-form button[type=submit]")
        page.wait_for_selector("#web-search-current:has-text('Brave')")
        assert "BSA…1234" in page.inner_text("#web-search-current")
        assert "BSA-secret-value-1234" not in page.content()
        assert page.input_value("#web-search-form input[name=api_key]") == ""
        page.context.close()
