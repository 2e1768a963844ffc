"""The test console's run history links each finished run to its trace, in headless
Chromium against Daphne: the trace page draws the run's one tool span."""

from __future__ import annotations

import pytest

from tests.conftest import browser_login
from tools_app.models import ToolRun

pytestmark = [
    pytest.mark.browser,
    pytest.mark.django_db(transaction=True),
    pytest.mark.timeout(300),
]


def test_the_console_history_links_a_run_to_its_trace(studio_server, browser, owner):
    page = browser_login(browser, studio_server, "owner")
    page.goto(f"{studio_server}/tools/unit_convert/#test")
    page.wait_for_selector("#test-console")
    page.click("#console-tab-json")
    page.fill("#console-json", '{"value": 100, "from": "c", "to": "f"}')
    page.click("#console-send")
    page.wait_for_selector("#console-status[data-status='completed']", timeout=60000)
    run = ToolRun.objects.get(tool__name="unit_convert")
    link = page.locator(f"#run-history a.history-trace[href='/traces/tool-runs/{run.pk}/']")
    link.wait_for()
    assert link.inner_text() == "View trace"
    link.click()
    page.wait_for_selector(".span-line")
    rows = page.locator(".span-line")
    assert rows.count() == 1
    assert rows.nth(0).get_attribute("data-kind") == "tool"
    assert "unit_convert" in rows.nth(0).inner_text()
    assert "1 spans" in page.locator("#trace-summary").inner_text()
    # The row opens to the run's input and output.
    rows.nth(0).click()
    shown = page.locator(".span-row").nth(0).inner_text()
    assert "Output" in shown and '"value": 212' in shown and '"value": 100' in shown
    assert "mode\nsync" in shown
    assert page.locator("#trace-tool").get_attribute("href") == "/tools/unit_convert/#test"
    page.context.close()
