"""The test console of a Python tool says how this server isolates its code, on top of the
console and on every run: isolated, weak (the operator's explicit choice), or refused
with the reason. Headless Chromium against a real Daphne process."""

from __future__ import annotations

import json
import os

import pytest

from tests.conftest import browser_login, daphne_process
from tools_app.models import Tool

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

SHOTS = os.environ.get("STUDIO_SCREENSHOTS", "")
# Runs sharing one uid without a cgroup: bubblewrap works, but runs are not isolated from
# each other (weak).
WEAK_HOST = {"STUDIO_SANDBOX_UID_COUNT": "0", "STUDIO_SANDBOX_CGROUP": "off"}


def shot(page, name: str) -> None:
    """Screenshots for a person to look at while developing (STUDIO_SCREENSHOTS=dir)."""
    if SHOTS:
        page.screenshot(path=os.path.join(SHOTS, f"{name}.png"), full_page=True)


@pytest.fixture
def doubler(owner) -> Tool:
    return Tool.objects.create(
        name="double_it",
        kind="python",
        owner=owner,
        description="Doubles a number.",
        input_schema={"type": "object", "properties": {"n": {"type": "number"}}},
        config={"code": "return {'double': input['n'] * 2}"},
        timeout_seconds=10,
    )


def open_console(browser, base_url: str):
    page = browser_login(browser, base_url, "owner")
    page.goto(f"{base_url}/tools/double_it/#test")
    page.wait_for_selector("#test-console")
    page.wait_for_selector("#console-sandbox:not(.is-loading)")
    return page


def send(page, n: str, status: str) -> None:
    page.fill("#console-form input[name='$.n']", n)
    page.click("#console-send")
    page.wait_for_selector(f"#console-status[data-status='{status}']", timeout=30000)


def test_an_isolated_server_says_so_on_the_console_and_on_each_run(studio_server, browser, doubler):
    page = open_console(browser, studio_server)

    banner = page.locator("#console-sandbox")
    assert banner.get_attribute("data-level") == "strong"
    assert banner.inner_text().startswith("✓ Isolated")
    assert page.locator("#console-sandbox-label").inner_text() == (
        "bwrap: own uid, 64 processes, 256 MB, 1 CPU (cgroup v1). Timeouts up to 300 s."
    )
    send(page, "21", "completed")
    assert json.loads(page.locator("#console-output").inner_text()) == {"double": 42}
    isolation = page.locator("#console-isolation")
    assert "is-strong" in isolation.get_attribute("class")
    assert isolation.inner_text().startswith("isolation: bwrap: own uid")
    shot(page, "console-isolated")
    page.context.close()


def test_weak_isolation_is_refused_on_the_console_with_its_reason(browser, doubler):
    with daphne_process(**WEAK_HOST) as url:
        page = open_console(browser, url)

        banner = page.locator("#console-sandbox")
        assert banner.get_attribute("data-level") == "refused"
        assert "Python tools are disabled on this server" in banner.inner_text()
        assert "STUDIO_SANDBOX_ALLOW_WEAK=1" in banner.inner_text()
        send(page, "1", "failed")
        error = page.locator("#console-error").inner_text()
        assert error.startswith("Python tools are disabled on this server")
        shot(page, "console-refused")
        page.context.close()


def test_weak_isolation_the_operator_accepted_is_shown_as_a_warning(browser, doubler):
    with daphne_process(**WEAK_HOST, STUDIO_SANDBOX_ALLOW_WEAK="1") as url:
        page = open_console(browser, url)

        banner = page.locator("#console-sandbox")
        assert banner.get_attribute("data-level") == "weak"
        assert banner.inner_text().startswith("⚠ Weak isolation (the operator's choice)")
        send(page, "2", "completed")
        isolation = page.locator("#console-isolation")
        assert "is-weak" in isolation.get_attribute("class")
        assert isolation.inner_text().startswith("isolation: weak: bwrap without a process")
        shot(page, "console-weak")
        page.context.close()
