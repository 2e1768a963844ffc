"""Steps that several browser tests take: a screenshot for a person to look at
(STUDIO_SCREENSHOTS=dir), and running a tool in its page's test console."""

from __future__ import annotations

import json
import os
from typing import Any

SHOTS = os.environ.get("STUDIO_SCREENSHOTS", "")


def shot(page, name: str) -> None:
    if SHOTS:
        page.screenshot(path=os.path.join(SHOTS, f"{name}.png"), full_page=True)


def console_run(page, base_url: str, tool: str, payload: dict[str, Any]) -> Any:
    """From a link to the tool's page already clicked: open its test console, send
    `payload` as JSON, wait for the run to complete and return its output."""
    page.wait_for_url(f"{base_url}/tools/{tool}/")
    page.wait_for_selector("#tools-app[data-ready='1']")
    page.click("#test-tool")
    page.wait_for_selector("#test-console")
    page.click("#console-tab-json")
    page.fill("#console-json", json.dumps(payload))
    page.click("#console-send")
    page.wait_for_selector("#console-status[data-status='completed']", timeout=30000)
    return json.loads(page.locator("#console-output").inner_text())
