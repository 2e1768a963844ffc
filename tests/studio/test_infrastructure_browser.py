"""The real parts the suite stands on, in a browser: Daphne serving the studio to Chromium."""

from __future__ import annotations

import httpx
import pytest

from tests.conftest import browser_login


@pytest.mark.browser
def test_chromium_signs_in_through_daphne_and_sees_the_demo_agents(studio_server, browser, owner):
    assert httpx.get(f"{studio_server}/", follow_redirects=False).status_code == 302
    page = browser_login(browser, studio_server, "owner")
    agents = page.locator("#agent-list .agent-name")
    assert set(agents.all_inner_texts()) >= {"Weather assistant", "Supervisor", "Researcher"}
    supervisor = page.locator('.agent-card[data-agent="supervisor"]')
    assert "agent-researcher" in supervisor.inner_text()
    page.context.close()
