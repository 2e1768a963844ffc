"""The trace page in headless Chromium against Daphne: reached from the chat's "view
trace", a waterfall of the run's spans whose rows open to their inputs and outputs."""

from __future__ import annotations

import pytest

from agents_core.models import Run
from tests.frontend.test_chat import open_chat, send, wait_idle

pytestmark = [
    pytest.mark.browser,
    pytest.mark.django_db(transaction=True),
    pytest.mark.timeout(300),
]


def test_the_chat_links_each_run_to_its_waterfall(studio_server, browser, owner):
    page = open_chat(browser, studio_server, "/chat/weather-assistant/")
    send(page, "use weather_lookup for Paris")
    wait_idle(page)
    run = Run.objects.get(thread__owner=owner)
    link = page.locator(".turn-assistant .run-trace-link")
    assert link.get_attribute("href") == f"/traces/{run.pk}/"
    seen = len(page.chat_logs)  # what the trace page logs, not the chat
    link.click()
    page.wait_for_selector(".span-line")
    rows = page.locator(".span-line")
    assert [rows.nth(i).get_attribute("data-kind") for i in range(rows.count())] == [
        "run",
        "model",
        "tool",
        "model",
    ]
    # Children are indented under the run, and every bar has a place on the time line.
    tool = page.locator('.span-line[data-kind="tool"]')
    assert "weather_lookup" in tool.inner_text()
    bars = page.eval_on_selector_all(
        ".span-bar", "bars => bars.map(b => [parseFloat(b.style.left), parseFloat(b.style.width)])"
    )
    assert bars[0] == [0, 100] and all(0 <= left < 100 and width > 0 for left, width in bars)
    padding = page.eval_on_selector(
        '.span-line[data-kind="tool"] .span-name', "n => getComputedStyle(n).paddingLeft"
    )
    assert padding == "16px"
    # A row opens to what the tool got and gave, and the model's messages.
    tool.click()
    more = page.locator(".span-row").nth(2).locator(".span-more")
    more.wait_for()
    assert '"city": "Paris"' in more.inner_text() and "conditions" in more.inner_text()
    model = page.locator('.span-line[data-kind="model"]').first
    model.click()
    messages = page.locator(".span-row").nth(1).locator(".span-more")
    assert "use weather_lookup for Paris" in messages.inner_text()
    assert "input_tokens" in messages.inner_text()
    assert "4 spans" in page.locator("#trace-summary").inner_text()
    page.screenshot(path="/tmp/trace-page.png", full_page=True)
    logged = page.chat_logs[seen:]
    assert not [log for log in logged if log.startswith(("error", "pageerror"))], logged


def test_another_users_trace_page_is_a_404(client, owner, outsider):
    from agents_core.models import Agent
    from agents_core.services.threads import thread_create

    agent = Agent.objects.create(slug="a", name="A", model="studio/scripted", owner=owner)
    thread = thread_create(user=owner, agent=agent)
    run = Run.objects.create(thread=thread, agent=agent, status="completed")
    client.force_login(outsider)
    assert client.get(f"/traces/{run.pk}/").status_code == 404
    client.force_login(owner)
    assert client.get(f"/traces/{run.pk}/").status_code == 200


def test_the_runs_page_filters_runs_and_draws_usage_charts(studio_server, browser, owner):
    page = open_chat(browser, studio_server, "/chat/weather-assistant/")
    send(page, "use weather_lookup for Paris")
    wait_idle(page)
    run = Run.objects.get(thread__owner=owner)
    seen = len(page.chat_logs)
    page.click("#nav-runs")
    page.wait_for_selector(f'#runs-rows tr[data-run-id="{run.pk}"]')
    # uPlot draws each chart on a canvas, its legend names the series.
    page.wait_for_selector("#chart-runs canvas")
    assert page.locator(".usage-charts canvas").count() == 3
    assert "tokens in" in page.locator("#chart-tokens").inner_text()
    assert "studio/scripted" in page.locator("#usage-table").inner_text()
    assert "time to first token" in page.locator("#latency-table").inner_text()
    # A filter that matches nothing, then a search that finds the run again.
    page.select_option("#runs-filters select[name=status]", "failed")
    page.click("#runs-filters button[type=submit]")
    page.wait_for_selector("#runs-rows >> text=No runs match.")
    page.select_option("#runs-filters select[name=status]", "")
    page.fill("#runs-filters input[name=q]", "weather_lookup")
    page.click("#runs-filters button[type=submit]")
    page.wait_for_selector(f'#runs-rows tr[data-run-id="{run.pk}"]')
    page.click(f'#runs-rows tr[data-run-id="{run.pk}"] .run-trace-link')
    page.wait_for_selector(".span-line")
    page.go_back()
    page.fill("#runs-filters input[name=min_ms]", "-5")
    page.eval_on_selector("#runs-filters", "f => f.noValidate = true")
    page.click("#runs-filters button[type=submit]")
    page.wait_for_selector("#runs-errors:not([hidden])")
    assert "min_ms" in page.locator("#runs-errors").inner_text()
    page.screenshot(path="/tmp/trace-runs.png", full_page=True)
    logged = [log for log in page.chat_logs[seen:] if log.startswith("pageerror")]
    assert not logged, logged
