"""Widget tools in the chat, in headless Chromium against Daphne and the offline model
(its script calls a tool with the JSON object the message holds): each widget kind drawn
from a run, a choice list and a form answered in place that resume the run (the form
after the server restarted), and markup or script URLs in a description left inert."""

from __future__ import annotations

import json
import os

import pytest

from agents_core.models import Run, ToolCall
from tests.conftest import browser_login, daphne_process
from tests.frontend.test_chat import card_when, make_agent, open_chat, send, wait_idle
from tests.tools_app.engine.test_widget_type import FORM
from tools_app.models import Tool
from tools_app.types.widget.schemas import WIDGET_SCHEMAS

pytestmark = [
    pytest.mark.browser,
    pytest.mark.django_db(transaction=True),
    pytest.mark.timeout(300),
]
SHOTS = os.environ.get("STUDIO_SCREENSHOTS", "")

CARD = {
    "title": "Hotel Lutetia",
    "subtitle": "Paris, left bank",
    "body": "Art deco hotel near Sèvres-Babylone.",
    "url": "https://example.org/lutetia",
    "image": "https://example.org/lutetia.jpg",
    "fields": [{"label": "Price", "value": "420 €"}, {"label": "Stars", "value": 5}],
    "links": [{"label": "Book", "url": "https://example.org/book"}],
}
TABLE = {
    "title": "Trains to Lyon",
    "columns": ["Train", "Leaves", "Minutes"],
    "rows": [["TGV 6601", "07:00", 118], ["TGV 6603", "08:00", 121], ["Ouigo 7801", "09:10", 125]],
}
CHART = {
    "title": "Rain this week",
    "type": "bar",
    "x": ["Mon", "Tue", "Wed", "Thu", "Fri"],
    "series": [
        {"name": "Paris", "values": [2, 0, 5.5, 1, None]},
        {"name": "Lyon", "values": [0, 1, 3, 4, 2]},
    ],
    "y_label": "mm",
}
LINE = {
    "title": "Temperature",
    "x": [1, 2, 3, 4],
    "series": [{"name": "°C", "values": [12, 14, 13, 17]}],
}
CHOICE = {
    "question": "Which city should we visit?",
    "options": [
        {"value": "lyon", "label": "Lyon", "description": "Two hours by train"},
        "Nice",
        "Lille",
    ],
}


def widget_tool(owner, name: str, widget: str) -> Tool:
    return Tool.objects.create(
        name=name,
        description=f"Show the user a {widget}.",
        kind="widget",
        owner=owner,
        input_schema=WIDGET_SCHEMAS[widget],
        config={"widget": widget},
        timeout_seconds=3600 if widget in ("choice", "form") else 30,
    )


def widget_agent(owner):
    names = {
        "show_card": "card",
        "show_table": "table",
        "show_chart": "chart",
        "pick_city": "choice",
        "book_form": "form",
    }
    return make_agent(owner, *(widget_tool(owner, name, kind) for name, kind in names.items()))


def call(page, tool: str, description: dict) -> None:
    send(page, f"Use {tool} with {json.dumps(description, ensure_ascii=False)}")


def shot(page, name: str) -> None:
    if SHOTS:
        page.screenshot(path=os.path.join(SHOTS, f"widget-{name}.png"), full_page=True)


def test_card_table_and_charts_are_drawn_from_a_run(studio_server, browser, owner):
    widget_agent(owner)
    page = open_chat(browser, studio_server, "/chat/chat-helper/")

    call(page, "show_card", CARD)
    card = card_when(page, "show_card", "completed").locator(".widget-card")
    assert card.locator("h4 a").get_attribute("href") == "https://example.org/lutetia"
    assert card.locator("h4 a").get_attribute("rel") == "noopener noreferrer nofollow"
    assert "Art deco hotel" in card.locator(".widget-card-body").inner_text()
    assert card.locator(".widget-card-fields dd").all_inner_texts() == ["420 €", "5"]
    assert (
        card.locator(".widget-card-image a").get_attribute("href")
        == "https://example.org/lutetia.jpg"
    )
    assert card.locator("img").count() == 0  # images are links: the CSP loads only ours
    wait_idle(page)
    shot(page, "card")

    call(page, "show_table", TABLE)
    table = card_when(page, "show_table", "completed").locator(".widget-table table")
    assert table.locator("th").all_inner_texts() == ["Train", "Leaves", "Minutes"]
    assert table.locator("tbody tr").count() == 3
    assert table.locator("tbody tr").nth(1).locator("td").all_inner_texts() == [
        "TGV 6603",
        "08:00",
        "121",
    ]
    wait_idle(page)
    shot(page, "table")

    call(page, "show_chart", CHART)
    chart = card_when(page, "show_chart", "completed").locator(".widget-chart")
    assert chart.locator("h4").inner_text() == "Rain this week"
    assert chart.locator("svg .chart-series").count() == 2
    assert chart.locator("svg rect").count() == 9  # one bar per number, none for the gap
    assert chart.locator(".widget-legend li").all_inner_texts() == ["Paris", "Lyon"]
    wait_idle(page)
    shot(page, "chart-bar")

    call(page, "show_chart", LINE)
    page.wait_for_function("() => document.querySelectorAll('.widget-chart').length === 2")
    line = page.locator(".widget-chart").nth(1)
    assert line.locator("svg polyline").count() == 1
    assert line.locator("svg circle").count() == 4
    wait_idle(page)
    shot(page, "chart-line")

    page.reload()
    page.wait_for_function("() => document.querySelectorAll('.declared-widget').length === 4")
    page.context.close()


def test_a_choice_is_answered_in_place_and_the_run_goes_on(studio_server, browser, owner):
    widget_agent(owner)
    page = open_chat(browser, studio_server, "/chat/chat-helper/")

    call(page, "pick_city", CHOICE)
    form = page.locator('.tool-card[data-tool-name="pick_city"] form.widget-declared-choice')
    form.wait_for()
    assert form.locator(".widget-title").inner_text() == "Which city should we visit?"
    assert form.locator(".choice-label").all_inner_texts() == ["Lyon", "Nice", "Lille"]
    shot(page, "choice")
    form.locator("button[type=submit]").click()
    assert form.locator(".widget-error").inner_text() == "Choose an option."
    form.locator("input[value=lyon]").check()
    form.locator("button[type=submit]").click()

    card = card_when(page, "pick_city", "completed")
    # The answered line names the option by its label; the tool's result keeps the value.
    assert "You answered: Lyon" in card.inner_text()
    assert json.loads(card.locator(".tool-result pre").inner_text()) == {"answer": "lyon"}
    wait_idle(page)
    assert Run.objects.get().status == "completed"
    page.reload()
    assert "You answered: Lyon" in card_when(page, "pick_city", "completed").inner_text()
    page.context.close()


def test_a_form_answered_after_a_server_restart_resumes_the_run(browser, owner, transactional_db):
    widget_agent(owner)
    with daphne_process() as first:
        page = open_chat(browser, first, "/chat/chat-helper/")
        call(page, "book_form", FORM)
        page.locator("form.widget-declared-form").wait_for()
        page.wait_for_function(
            "() => document.querySelector('#chat-app').dataset.run === 'suspended'"
        )
        page.context.close()
    assert Run.objects.get().status == "suspended"

    with daphne_process() as second:
        page = browser_login(browser, second, "owner")
        page.goto(f"{second}/chat/chat-helper/")
        page.locator(".thread-item a").first.click()
        form = page.locator('.tool-card[data-tool-name="book_form"] form.widget-declared-form')
        form.wait_for()
        assert form.locator(".widget-form-description").inner_text() == FORM["description"]
        assert form.locator("select[name=room] option").all_inner_texts() == [
            "—",
            "single",
            "double",
        ]
        form.locator("input[name=guests]").fill("2")
        form.locator("button[type=submit]").click()
        assert form.locator(".widget-error").inner_text() == "Arrival is required."
        form.locator("input[name=arrival]").fill("2026-05-01")
        form.locator("select[name=room]").select_option("double")
        form.locator("input[name=breakfast]").check()
        shot(page, "form")
        form.locator("button[type=submit]").click()

        card = card_when(page, "book_form", "completed")
        values = {"guests": 2, "arrival": "2026-05-01", "room": "double", "breakfast": True}
        assert json.loads(card.locator(".tool-result pre").inner_text()) == {"values": values}
        assert "You answered: guests: 2" in card.inner_text()
        wait_idle(page)
        shot(page, "form-answered")
        page.context.close()
    assert Run.objects.get().status == "completed"
    assert ToolCall.objects.get(tool_name="book_form").output == {"values": values}


def test_markup_and_script_urls_stay_inert(studio_server, browser, owner):
    widget_agent(owner)
    page = open_chat(browser, studio_server, "/chat/chat-helper/")
    hostile = {
        "title": "<script>window.__pwned = 1</script>Deal",
        "body": '<img src=x onerror="window.__pwned = 2">'
        '<a href="javascript:window.__pwned=3">go</a>',
        "fields": [{"label": "<b>bold</b>", "value": "<svg onload=window.__pwned=4>"}],
    }

    call(page, "show_card", hostile)
    card = card_when(page, "show_card", "completed").locator(".widget-card")
    assert card.locator("h4").inner_text() == hostile["title"]
    assert hostile["body"] in card.locator(".widget-card-body").inner_text()
    assert card.locator("script, img, svg, b, a").count() == 0
    wait_idle(page)

    call(page, "show_card", {"title": "Click", "url": "javascript:window.__pwned=5"})
    refused = card_when(page, "show_card", "failed").last
    assert refused.locator(".error-paths code").all_inner_texts() == ["$.url"]
    wait_idle(page)
    # The page draws no script link even from a description that never passed the server.
    drawn = page.evaluate(
        """async () => {
          const { renderWidgetResult } = await import('/static/js/lib/widget_kinds.js');
          const node = renderWidgetResult({widget: {kind: 'card', title: 'x',
            url: 'javascript:alert(1)', links: [{label: 'y', url: ' JAVASCRIPT:alert(1)'},
            {label: 'z', url: 'data:text/html,hi'}]}});
          return {links: node.querySelectorAll('a').length,
            refused: node.querySelectorAll('.widget-link-refused').length};
        }"""
    )
    assert drawn == {"links": 0, "refused": 2}
    shot(page, "inert")
    assert page.evaluate("() => window.__pwned") is None
    page.context.close()
