"""Async tool runs in the test console: a real Celery worker runs the tool, and the
result reaches the page over the /ws/tool-runs/ websocket (or by polling when the socket
is down) without a reload."""

from __future__ import annotations

import json
import os

import pytest

from tests.conftest import browser_login
from tools_app.models import Tool, ToolRun

pytestmark = [
    pytest.mark.browser,
    pytest.mark.celery_worker,
    pytest.mark.django_db(transaction=True),
]

SHOTS = os.environ.get("STUDIO_SCREENSHOTS", "")


def test_an_async_run_shows_pending_then_its_result_arrives_over_the_websocket(
    celery_worker, studio_server, browser, owner
):
    page = browser_login(browser, studio_server, "owner")
    pushed = []
    page.on(
        "websocket",
        lambda ws: ws.on("framereceived", lambda frame: pushed.append(json.loads(frame))),
    )
    page.goto(f"{studio_server}/tools/unit_convert/#test")
    page.wait_for_selector("#console-live[data-state='open']")
    page.click("#console-tab-json")
    page.fill("#console-json", '{"value": 100, "from": "c", "to": "f"}')
    page.check("#run-async")
    with page.expect_response(lambda r: "/execute" in r.url) as answer:
        page.click("#console-send")
    assert answer.value.status == 202
    assert answer.value.json()["status"] == "pending"

    page.wait_for_selector("#console-status[data-status='completed']", timeout=60000)
    # The page showed the pending run first, then the pushed result, without a reload.
    assert page.locator("#console-result").get_attribute("data-trail") == "pending completed"
    run_id = answer.value.json()["id"]
    assert [m["status"] for m in pushed if m.get("id") == run_id] == ["completed"]
    assert json.loads(page.locator("#console-output").inner_text()) == {"value": 212.0, "unit": "f"}
    if SHOTS:
        page.screenshot(path=os.path.join(SHOTS, "console-async.png"), full_page=True)
    run = ToolRun.objects.get(tool__name="unit_convert")
    assert (run.mode, run.status) == ("async", "completed")
    page.context.close()


def test_an_async_tool_falls_back_to_polling_when_the_websocket_is_down(
    celery_worker, studio_server, browser, owner
):
    Tool.objects.create(
        name="slow_echo",
        kind="python",
        owner=owner,
        execution_mode="async",
        input_schema={
            "type": "object",
            "properties": {"text": {"type": "string", "default": "hello"}},
        },
        config={"code": "return {'echo': input.get('text')}"},
    )
    page = browser_login(browser, studio_server, "owner")
    # Every attempt to open the socket is refused, as when a proxy drops websockets.
    page.route_web_socket("**/ws/tool-runs/", lambda ws: ws.close())
    page.goto(f"{studio_server}/tools/slow_echo/#test")
    page.wait_for_selector("#test-console")
    # The tool always runs async: the option is on and cannot be turned off.
    assert page.is_checked("#run-async") and page.is_disabled("#run-async")
    page.click("#console-send")
    page.wait_for_selector("#console-status[data-status='completed']", timeout=60000)
    assert page.locator("#console-via").inner_text() == "fetched"
    assert json.loads(page.locator("#console-output").inner_text()) == {"echo": "hello"}
    page.context.close()
