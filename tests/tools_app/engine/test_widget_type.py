"""Widget tools on the server: the description checked against its kind's JSON Schema
(jsonschema) and the rules a schema cannot say, each error with its JSON path; display
widgets answer the widget, choice lists and forms suspend and take a checked answer."""

from __future__ import annotations

import pytest
from asgiref.sync import async_to_sync

from tools_app.definitions import DefinitionError
from tools_app.errors import ToolError, ToolSuspended
from tools_app.execution import ExecutionContext
from tools_app.models import Tool
from tools_app.services.execute import tool_execute
from tools_app.types import get_type
from tools_app.types.widget import create_widget_tool, widget_errors
from tools_app.types.widget.schemas import WIDGET_SCHEMAS

pytestmark = pytest.mark.django_db

CARD = {
    "title": "Hotel Lutetia",
    "subtitle": "Paris 6e",
    "body": "Art deco hotel on the left bank.",
    "image": "https://example.org/lutetia.jpg",
    "url": "https://example.org/lutetia",
    "fields": [{"label": "Price", "value": "420 €"}, {"label": "Stars", "value": 5}],
    "links": [{"label": "Book", "url": "https://example.org/book"}],
}
TABLE = {"title": "Trains", "columns": ["From", "To", "Minutes"], "rows": [["Paris", "Lyon", 118]]}
CHART = {
    "title": "Rain",
    "type": "bar",
    "x": ["Mon", "Tue", "Wed"],
    "series": [{"name": "mm", "values": [1.5, 0, None]}],
}
CHOICE = {"question": "Which city?", "options": ["Paris", {"value": "lyon", "label": "Lyon"}]}
FORM = {
    "title": "Book the hotel",
    "description": "The agent books it with these details.",
    "submit_label": "Book",
    "fields": [
        {
            "name": "guests",
            "label": "Guests",
            "type": "integer",
            "required": True,
            "min": 1,
            "max": 6,
        },
        {"name": "arrival", "label": "Arrival", "type": "date", "required": True},
        {"name": "room", "label": "Room", "type": "select", "options": ["single", "double"]},
        {"name": "breakfast", "label": "Breakfast", "type": "boolean"},
        {"name": "note", "label": "Note", "type": "textarea"},
    ],
}


def widget_tool(api, name: str, widget: str) -> Tool:
    response = api.post(
        "/api/tools/",
        {
            "name": name,
            "kind": "widget",
            "description": f"Show a {widget}.",
            "config": {"widget": widget},
        },
        format="json",
    )
    assert response.status_code == 201, response.content
    return Tool.objects.get(name=name)


@pytest.mark.parametrize(
    ("widget", "description"), [("card", CARD), ("table", TABLE), ("chart", CHART)]
)
def test_a_display_widget_is_its_own_result(api, owner, widget, description):
    tool = widget_tool(api, f"show_{widget}", widget)

    run = tool_execute(tool=tool, input=description, user=owner)

    assert tool.input_schema == WIDGET_SCHEMAS[widget]
    assert run.status == "completed", run.error
    assert run.output == {"widget": {"kind": widget, **description}}


@pytest.mark.parametrize(
    ("widget", "description", "path"),
    [
        ("card", {**CARD, "url": "javascript:alert(1)"}, "$.url"),
        ("card", {**CARD, "image": "data:image/png;base64,AAAA"}, "$.image"),
        (
            "card",
            {**CARD, "links": [{"label": "x", "url": "JavaScript:alert(1)"}]},
            "$.links[0].url",
        ),
        ("card", {"body": "no title"}, "$"),
        ("table", {**TABLE, "rows": [["Paris", "Lyon", 118], ["Nice"]]}, "$.rows[1]"),
        ("table", {**TABLE, "rows": [[{"html": "<b>"}, "a", "b"]]}, "$.rows[0][0]"),
        ("chart", {**CHART, "series": [{"name": "mm", "values": [1]}]}, "$.series[0].values"),
        ("chart", {**CHART, "type": "pie"}, "$.type"),
        ("choice", {"question": "?", "options": ["a", "a"]}, "$.options[1]"),
        ("choice", {"question": "?", "options": ["only"]}, "$.options"),
        (
            "form",
            {"title": "t", "fields": [{"name": "a", "label": "A", "type": "select"}]},
            "$.fields[0]",
        ),
        (
            "form",
            {"title": "t", "fields": [{"name": "a", "label": "A"}, {"name": "a", "label": "B"}]},
            "$.fields[1].name",
        ),
        ("form", {"title": "t", "fields": [{"name": "1bad", "label": "A"}]}, "$.fields[0].name"),
    ],
)
def test_a_bad_description_names_its_json_path(widget, description, path):
    errors = widget_errors(widget, description)

    assert errors and errors[0]["path"] == path


def test_a_bad_description_is_a_tool_error_the_model_reads(api, owner):
    tool = widget_tool(api, "show_table", "table")

    run = tool_execute(tool=tool, input={**TABLE, "rows": [["Paris"]]}, user=owner)

    assert run.status == "failed"
    assert run.error == "Invalid table widget: $.rows[0]: has 1 cells for 3 columns"
    assert run.errors == [{"path": "$.rows[0]", "message": "has 1 cells for 3 columns"}]


def test_an_unknown_widget_kind_is_refused_when_the_tool_is_saved(api):
    response = api.post(
        "/api/tools/",
        {"name": "show_pie", "kind": "widget", "config": {"widget": "pie"}},
        format="json",
    )

    assert response.status_code == 400
    assert "config.widget" in response.content.decode()


def test_a_tool_with_its_own_input_schema_keeps_it(api):
    schema = {"type": "object", "properties": {"title": {"type": "string"}}, "required": ["title"]}
    response = api.post(
        "/api/tools/",
        {
            "name": "show_note",
            "kind": "widget",
            "config": {"widget": "card"},
            "input_schema": schema,
        },
        format="json",
    )

    assert response.status_code == 201
    assert Tool.objects.get(name="show_note").input_schema == schema


def suspend(tool: Tool, description: dict) -> dict:
    context = ExecutionContext(run=object())
    with pytest.raises(ToolSuspended) as raised:
        async_to_sync(get_type("widget").execute)(tool, description, context)
    return raised.value.payload


def resume(tool: Tool, description: dict, answer: dict):
    context = ExecutionContext(run=object(), resume_payload=answer)
    return async_to_sync(get_type("widget").execute)(tool, description, context)


def test_a_choice_suspends_with_its_answer_schema_and_takes_an_option(api):
    tool = widget_tool(api, "pick_city", "choice")

    payload = suspend(tool, CHOICE)

    assert payload["kind"] == "widget"
    assert payload["widget"] == {"kind": "choice", **CHOICE}
    assert payload["resumeSchema"]["properties"]["answer"] == {"enum": ["Paris", "lyon"]}
    assert resume(tool, CHOICE, {"answer": "lyon"}) == {"answer": "lyon"}
    with pytest.raises(ToolError, match=r"Invalid answer: \$.answer"):
        resume(tool, CHOICE, {"answer": "Lyon"})


def test_a_multiple_choice_takes_a_list(api):
    tool = widget_tool(api, "pick_cities", "choice")
    description = {**CHOICE, "multiple": True}

    assert resume(tool, description, {"answer": ["Paris", "lyon"]}) == {"answer": ["Paris", "lyon"]}
    with pytest.raises(ToolError):
        resume(tool, description, {"answer": []})


def test_a_form_answer_is_checked_field_by_field(api):
    tool = widget_tool(api, "booking_form", "form")
    schema = suspend(tool, FORM)["resumeSchema"]["properties"]["values"]

    assert schema["required"] == ["guests", "arrival"]
    values = {"guests": 2, "arrival": "2026-05-01", "room": "double", "breakfast": True}
    assert resume(tool, FORM, {"values": values}) == {"values": values}
    with pytest.raises(ToolError, match=r"\$.values.guests"):
        resume(tool, FORM, {"values": {**values, "guests": 9}})
    with pytest.raises(ToolError, match=r"\$.values.arrival"):
        resume(tool, FORM, {"values": {**values, "arrival": "tomorrow"}})
    with pytest.raises(ToolError, match=r"\$.values"):
        resume(tool, FORM, {"values": {**values, "extra": 1}})


def test_an_interactive_widget_cannot_wait_in_the_console(api, owner):
    tool = widget_tool(api, "pick_city", "choice")

    run = tool_execute(tool=tool, input=CHOICE, user=owner)

    assert run.status == "failed"
    assert "waits for the user's answer in the preview chat" in run.error


def test_code_declares_a_widget_tool(code_tool, owner):
    definition = create_widget_tool(id="pick_colour", widget="choice", description="Pick a colour.")
    tool = code_tool(definition)

    assert definition.kind == "widget" and definition.config == {"widget": "choice"}
    assert definition.input_schema == WIDGET_SCHEMAS["choice"]
    assert definition.timeout == 3600.0
    with pytest.raises(DefinitionError):
        create_widget_tool(id="pick_pie", widget="pie", description="x")
    tool.config = definition.config
    assert suspend(tool, CHOICE)["widget"]["kind"] == "choice"


def test_the_widget_type_is_offered_when_creating_a_tool(api):
    types = {t["kind"]: t for t in api.get("/api/tool-types/").json()}

    assert types["widget"]["config_schema"]["properties"]["widget"]["enum"] == sorted(
        WIDGET_SCHEMAS
    )
    assert types["widget"].get("creatable", True) is True
