"""The agent-test pages in headless Chromium against Daphne, Redis and a real Celery
worker: "Save as test case" in the chat, a suite run's results filled in live over the
websocket, and two runs compared side by side."""

from __future__ import annotations

import json

import pytest

from agents_core.editor.services.revisions import override_save
from evals.models import SuiteRun, TestCase
from evals.services.suite_runs import suite_run_start
from tests.conftest import browser_login
from tests.evals.conftest import wait_finished
from tests.frontend.test_chat import wait_idle

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_save_a_chat_as_a_test_case(synced, studio_server, browser, owner):
    page = browser_login(browser, studio_server, "owner")
    page.set_default_timeout(90_000)
    page.goto(f"{studio_server}/chat/travel-desk/")
    page.fill("#composer-input", "use weather_lookup for Paris")
    page.press("#composer-input", "Enter")
    page.wait_for_selector('.tool-card[data-tool-name="weather_lookup"][data-status="completed"]')
    wait_idle(page)

    page.click("#save-test-case")
    dialog = page.locator("#save-case-dialog")
    dialog.wait_for()
    draft = json.loads(dialog.locator("textarea[name=spec]").input_value())
    assert draft["turns"][0]["expect"][0] == {
        "type": "tool_called",
        "tool": "weather_lookup",
        "args": {"city": "Paris"},
    }
    # A bad edit is refused with the JSON path of the mistake.
    broken = {"turns": [{"message": "hi", "expect": [{"type": "answer_regex", "pattern": "(("}]}]}
    dialog.locator("textarea[name=spec]").fill(json.dumps(broken))
    dialog.locator("button[type=submit]").click()
    page.wait_for_selector("#save-case-dialog .error-box:not([hidden])")
    assert "$.spec.turns[0].expect[0].pattern" in dialog.locator(".error-box").inner_text()
    assert not TestCase.objects.exists()

    draft["turns"][0]["expect"].append({"type": "answer_contains", "value": "Paris"})
    dialog.locator("textarea[name=spec]").fill(json.dumps(draft))
    dialog.locator("input[name=name]").fill("Paris from a chat")
    dialog.locator("button[type=submit]").click()
    page.wait_for_selector("#save-case-dialog[data-saved]")
    page.screenshot(path="/tmp/evals-save-case.png")
    case = TestCase.objects.get(name="Paris from a chat")
    assert case.owner == owner and case.agent.slug == "travel-desk"
    assert case.spec["turns"][0]["message"] == "use weather_lookup for Paris"
    page.context.close()


@pytest.mark.timeout(360)  # two suite runs of seven cases each on a shared machine
def test_a_suite_run_fills_in_live_and_two_runs_compare(
    demo, celery_worker, studio_server, browser, owner, admin_user
):
    page = browser_login(browser, studio_server, "owner")
    page.set_default_timeout(120_000)
    page.goto(f"{studio_server}/tests/")
    page.click(f"button.run-suite[data-suite='{demo.slug}']")
    page.wait_for_url(f"{studio_server}/tests/runs/*/")
    page.wait_for_selector("#ev-run[data-socket='open']")
    first = SuiteRun.objects.get()
    page.wait_for_selector("#ev-run[data-status='failed']")
    # The results came over the websocket: it never closed, so nothing was re-fetched.
    assert page.locator("#ev-run").get_attribute("data-socket") == "open"
    assert page.locator("#progress-bar").get_attribute("aria-valuenow") == "7"
    assert (
        page.locator("#progress-text").inner_text().startswith("7 / 7 done · 3 passed · 4 failed")
    )
    wrong = page.locator(".ev-case[data-case='built to fail: wrong tool argument']")
    assert wrong.get_attribute("data-status") == "failed"
    assert "$.city" in wrong.locator("li.fail").inner_text()
    assert page.locator(".ev-case[data-status='passed']").count() == 3
    paris = page.locator(".ev-case[data-case='weather in Paris']")
    chat = paris.locator("a.ev-chat").get_attribute("href")
    assert chat.startswith("/chat/t/")
    # Each turn links to its run's trace, which the owner can open.
    result = first.results.get(case__name="weather in Paris")
    trace = paris.locator("a.ev-trace").first.get_attribute("href")
    assert trace == f"/traces/{result.turns[0]['runId']}/"
    page.screenshot(path="/tmp/evals-run.png", full_page=True)
    page.goto(f"{studio_server}{trace}")
    page.wait_for_selector(".span-line")

    agent = demo.agent
    agent.refresh_from_db()
    override_save(
        agent=agent,
        user=admin_user,
        data={"instructions": "Answer in French."},
        version=agent.version,
        lock_id=None,
    )
    second = wait_finished(suite_run_start(suite=demo, user=owner))
    page.goto(f"{studio_server}/tests/")
    page.check(f"#run-list input[name=a][value='{first.pk}']")
    page.check(f"#run-list input[name=b][value='{second.pk}']")
    page.click("#compare-runs")
    page.wait_for_selector("#ev-compare")
    changed = {
        row.get_attribute("data-field") for row in page.locator("#changes tr[data-field]").all()
    }
    assert {"agentVersion", "revision", "instructions"} <= changed
    assert (
        "Answer in French." in page.locator("#changes tr[data-field='instructions']").inner_text()
    )
    assert page.locator("#case-compare tr[data-case]").count() == 7
    page.screenshot(path="/tmp/evals-compare.png", full_page=True)
    page.context.close()
