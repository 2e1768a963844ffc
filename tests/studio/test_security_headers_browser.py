"""No page of the studio breaks its Content-Security-Policy in headless Chromium."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests.conftest import browser_login
from tests.studio.test_security_headers import CSP, directives, pages

# --- in Chromium --------------------------------------------------------------------------
# Records what the page's Content-Security-Policy refused (installed by the browser before
# any page script, so it is not itself an inline script of the page).
RECORD_VIOLATIONS = """
window.__cspViolations = [];
document.addEventListener("securitypolicyviolation", (event) => {
  window.__cspViolations.push(
    `${event.violatedDirective} blocked ${event.blockedURI || "inline"} ` +
    `(${event.sourceFile || ""}:${event.lineNumber || 0})`
  );
});
"""
# What shows that each page did its work (its scripts ran under the policy).
READY = {
    "home": "#agent-list .agent-card, .agent-card",
    "chat": "#conn-pill",
    "agent editor": "#instructions, textarea",
    "tool list": "a[href='/tools/weather_lookup/']",
    "tool form": "form",
    "tool console": "button",
    "tool edit": "form",
    "sources": "form",
    "API docs": "#swagger-ui .info .title",
    "browsable API": ".response-info",
    "admin index": "#content-main",
    "admin list": "#result_list",
    "admin code agent": "#editor-lock",
    "admin studio agent": "#editor-lock",
    "admin read-only agent": "#id_editor_instructions[disabled]",
    "admin add agent": "#agent_form",
    "admin tool": "#content-main form",
}


@pytest.mark.browser
@pytest.mark.django_db(transaction=True)
@pytest.mark.timeout(300)
def test_no_page_breaks_its_content_security_policy_in_chromium(
    studio_server, browser, studio_rows
):
    shots = Path(os.environ.get("STUDIO_SCREENSHOTS") or "/tmp/studio-csp")
    shots.mkdir(parents=True, exist_ok=True)
    anonymous = browser.new_context()
    anonymous.add_init_script(RECORD_VIOLATIONS)
    login = anonymous.new_page()
    messages: list[str] = []
    login.on("console", lambda m: messages.append(f"login: {m.text}"))
    response = login.goto(f"{studio_server}/accounts/login/")
    assert directives(response.headers["content-security-policy"]) == directives(CSP)
    violations = {"login": login.evaluate("window.__cspViolations")}
    anonymous.close()

    page = browser_login(browser, studio_server, "owner")
    page.context.add_init_script(RECORD_VIOLATIONS)
    page.set_default_timeout(90_000)
    page.on("console", lambda m: messages.append(f"{page.url}: {m.type}: {m.text}"))
    for name, url in pages(studio_rows).items():
        response = page.goto(f"{studio_server}{url}")
        assert response.status == 200, name
        assert directives(response.headers["content-security-policy"]) == directives(CSP), name
        assert response.headers["x-content-type-options"] == "nosniff", name
        page.wait_for_selector(READY[name], state="attached")
        if name == "chat":
            # A run streams into the page over the websocket (connect-src 'self').
            page.fill("#composer-input", "use weather_lookup for Paris")
            page.press("#composer-input", "Enter")
            page.wait_for_selector(".tool-card[data-status='completed']")
            assert page.locator("#conn-pill").inner_text() == "live"
            page.wait_for_selector("#chat-app[data-run='idle']")
        if name == "admin read-only agent":
            # The read-only look comes from the editor's stylesheet, not a style attribute.
            field = page.locator("#id_editor_instructions")
            assert field.get_attribute("style") is None
            assert field.evaluate("node => getComputedStyle(node).cursor") == "not-allowed"
        page.wait_for_load_state("networkidle")
        violations[name] = page.evaluate("window.__cspViolations")
        page.screenshot(path=str(shots / f"{name.replace(' ', '-')}.png"), full_page=True)
    page.context.close()

    assert {name: found for name, found in violations.items() if found} == {}
    refused = [m for m in messages if "Content Security Policy" in m]
    assert refused == []
