"""The tool panel in headless Chromium: list, create form, test console, history."""

from __future__ import annotations

import json
import os

import pytest

from tests.conftest import browser_login
from tools_app.demo import UNITS
from tools_app.models import Tool, ToolRun

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

SHOTS = os.environ.get("STUDIO_SCREENSHOTS", "")


def shot(page, name: str) -> None:
    """Screenshots for a person to look at while developing (STUDIO_SCREENSHOTS=dir)."""
    if SHOTS:
        page.screenshot(path=os.path.join(SHOTS, f"{name}.png"), full_page=True)


def open_tools(browser, studio_server, path: str = "/tools/"):
    page = browser_login(browser, studio_server, "owner")
    page.goto(f"{studio_server}{path}")
    page.wait_for_selector("#tools-app[data-ready='1']")
    return page


def test_the_panel_lists_code_tools_and_filters_them_by_kind_and_search(
    studio_server, browser, owner
):
    page = open_tools(browser, studio_server)
    assert page.locator("#tool-index [data-tool='unit_convert']").is_visible()
    shot(page, "tools-index")

    page.fill("#tool-search", "weather")
    assert page.locator("#tool-index [data-tool='weather_lookup']").is_visible()
    assert page.locator("#tool-index [data-tool='unit_convert']").count() == 0

    page.fill("#tool-search", "")
    page.click("#kind-filter [data-kind='code']")
    names = page.locator("#tool-index [data-tool]").evaluate_all(
        "els => els.map(e => e.dataset.tool)"
    )
    assert "unit_convert" in names
    kinds = set(Tool.objects.filter(name__in=names).values_list("kind", flat=True))
    assert kinds == {"code"}
    page.context.close()


def test_the_console_runs_unit_convert_from_the_form_and_shows_the_output(
    studio_server, browser, owner
):
    page = open_tools(browser, studio_server, "/tools/unit_convert/")
    page.click("#test-tool")
    page.wait_for_selector("#test-console")
    # The form is generated from the input schema: a number and two enum selects.
    page.fill("#console-form input[name='$.value']", "10")
    page.select_option("#console-form select[name='$.from']", label="km")
    page.select_option("#console-form select[name='$.to']", label="mi")
    page.click("#console-send")
    page.wait_for_selector("#console-status[data-status='completed']")
    output = json.loads(page.locator("#console-output").inner_text())
    assert output == {"value": 6.213712, "unit": "mi"}
    assert "ms" in page.locator("#console-duration").inner_text()
    shot(page, "console-completed")

    # The run is in the history; the raw JSON view shows the same input as the form.
    page.wait_for_selector("#run-history .history-row")
    page.click("#console-tab-json")
    assert json.loads(page.input_value("#console-json")) == {"value": 10, "from": "km", "to": "mi"}
    run = ToolRun.objects.get(tool__name="unit_convert")
    assert run.status == "completed" and run.input == {"value": 10, "from": "km", "to": "mi"}

    # Edits in the raw JSON reach the form; a second run joins the history on top.
    page.fill("#console-json", '{"value": 1, "from": "kg", "to": "lb"}')
    page.click("#console-tab-form")
    assert page.input_value("#console-form input[name='$.value']") == "1"
    page.click("#console-send")
    page.wait_for_selector(f"#run-history .history-row:not([data-run='{run.id}'])")
    assert page.locator("#run-history .history-row").count() == 2

    # Clicking the older run re-opens its input (and its result).
    page.click(f"#run-history .history-row[data-run='{run.id}']")
    assert page.input_value("#console-form input[name='$.value']") == "10"
    assert page.input_value("#console-form select[name='$.from']") == str(UNITS.index("km"))
    assert json.loads(page.locator("#console-output").inner_text()) == {
        "value": 6.213712,
        "unit": "mi",
    }
    page.context.close()


def test_invalid_input_shows_the_error_with_its_path_and_marks_the_field(
    studio_server, browser, owner
):
    page = open_tools(browser, studio_server, "/tools/unit_convert/#test")
    page.wait_for_selector("#test-console")
    page.click("#console-tab-json")
    page.fill("#console-json", '{"value": "ten", "from": "km", "to": "mi"}')
    page.click("#console-send")
    page.wait_for_selector("#console-status[data-status='failed']")
    paths = page.locator("#console-errors .error-path").evaluate_all(
        "els => els.map(e => e.dataset.path)"
    )
    assert "$.value" in paths
    # Back in the form, the field at that path is marked with the message.
    page.click("#console-errors .error-path[data-path='$.value']")
    field = page.locator("#console-form [data-path='$.value']")
    assert "sf-error" in field.get_attribute("class")
    assert field.locator(".sf-error-msg").is_visible()
    shot(page, "console-invalid")

    # A JSON syntax error is reported with line and column before anything is sent.
    page.click("#console-tab-json")
    page.fill("#console-json", '{\n  "value": 1,\n  "from": "km"\n  "to": "mi"\n}')
    assert "line 4" in page.locator("#console-json-status").inner_text()
    page.context.close()


ADD_CODE = 'print("adding", input["a"], input["b"])\nreturn {"sum": input["a"] + input["b"]}'
ADD_SCHEMA = {
    "type": "object",
    "properties": {"a": {"type": "number"}, "b": {"type": "number"}},
    "required": ["a", "b"],
}


def test_a_python_tool_is_created_with_its_name_kept_snake_case_then_tested(
    studio_server, browser, owner
):
    page = open_tools(browser, studio_server)
    page.click("#create-tool")
    page.wait_for_selector("#tool-form")
    page.click(".type-option[data-kind='python']")

    # snake_case is enforced while typing: spaces become _, capitals lowercase, "!" refused.
    page.type("#tool-name", "Add Numbers!")
    assert page.input_value("#tool-name") == "add_numbers"
    assert "not allowed" in page.locator("#tool-name-help").inner_text()

    page.fill("#tool-description", "Adds two numbers.")
    # The schema editor checks JSON while it is typed, with line and column.
    page.fill("#tool-input-schema", '{\n  "type": "object",\n  "properties": {\n}')
    assert "line" in page.locator("[data-field='input_schema'] .schema-status").inner_text()
    page.fill("#tool-input-schema", json.dumps(ADD_SCHEMA, indent=2))
    assert (
        "Valid JSON Schema"
        in page.locator("[data-field='input_schema'] .schema-status").inner_text()
    )
    page.fill("#tool-config textarea[name='$.code']", ADD_CODE)
    shot(page, "create-form")
    page.click("#save-tool")

    page.wait_for_url(f"{studio_server}/tools/add_numbers/")
    page.wait_for_selector("#tool-title")
    tool = Tool.objects.get(name="add_numbers")
    assert (tool.kind, tool.owner, tool.source) == ("python", owner, "studio")
    assert tool.config["code"] == ADD_CODE and tool.input_schema == ADD_SCHEMA
    assert page.locator("#tool-index [data-tool='add_numbers']").is_visible()

    page.click("#test-tool")
    page.fill("#console-form input[name='$.a']", "2")
    page.fill("#console-form input[name='$.b']", "3.5")
    page.click("#console-send")
    page.wait_for_selector("#console-status[data-status='completed']", timeout=30000)
    assert json.loads(page.locator("#console-output").inner_text()) == {"sum": 5.5}
    assert "adding 2 3.5" in page.locator("#console-logs").inner_text()
    assert page.locator("#console-isolation").inner_text().startswith("isolation:")
    shot(page, "python-tool-run")
    page.context.close()


def test_server_side_errors_are_shown_next_to_their_fields(studio_server, browser, owner):
    page = open_tools(browser, studio_server, "/tools/new/?kind=http")
    page.wait_for_selector("#tool-form")
    # An HTTP tool whose config misses its URL: the error lands on the config's url field.
    page.fill("#tool-name", "city_lookup")
    page.click("#save-tool")
    page.wait_for_selector("#tool-config [data-path='$.url'].sf-error, [data-error-for='config']")
    shot(page, "create-config-error")

    # A name already taken (by a code tool): the error is next to the name.
    page.fill("#tool-name", "unit_convert")
    page.fill("#tool-config input[name='$.url']", "http://127.0.0.1:9/cities/{query}")
    page.click("#save-tool")
    page.wait_for_selector("[data-error-for='name']")
    assert "unit_convert" in page.locator("[data-error-for='name']").inner_text()
    assert page.locator("#tool-config .sf-error").count() == 0
    shot(page, "create-name-error")

    # A schema that is valid JSON but not a valid JSON Schema: the server's message, with
    # its path, appears under the schema editor.
    page.fill("#tool-name", "city_lookup")
    page.fill(
        "#tool-output-schema",
        '{"type": "object", "properties": {"n": {"type": "integer", "minimum": "zero"}}}',
    )
    page.click("#save-tool")
    page.wait_for_selector("[data-error-for='output_schema']")
    assert "$.properties.n.minimum" in page.locator("[data-error-for='output_schema']").inner_text()
    assert not Tool.objects.filter(kind="http").exists()
    page.context.close()


def test_an_http_tool_is_edited_and_its_credentials_stay_write_only(studio_server, browser, owner):
    tool = Tool.objects.create(
        name="city_api",
        kind="http",
        owner=owner,
        input_schema={"type": "object", "properties": {"city": {"type": "string"}}},
        config={"url": "http://127.0.0.1:9/cities/{city}", "method": "GET"},
    )
    page = open_tools(browser, studio_server, "/tools/city_api/")
    page.click("#edit-tool")
    page.wait_for_selector("#tool-form")
    # The config form is generated from the type's config_schema and filled from the tool.
    assert page.input_value("#tool-config input[name='$.url']") == tool.config["url"]
    page.fill("#tool-description", "Looks a city up.")
    page.click("#advanced-settings summary")
    page.fill("input[data-credential='token']", "s3cret-token")
    page.check("input[name='execution_mode'][value='async']")
    page.click("#save-tool")
    page.wait_for_url(f"{studio_server}/tools/city_api/")
    page.wait_for_selector("#tool-title")
    assert "Looks a city up." in page.locator(".tool-desc").inner_text()

    tool.refresh_from_db()
    assert tool.description == "Looks a city up." and tool.execution_mode == "async"
    assert tool.credentials_encrypted and "s3cret-token" not in tool.credentials_encrypted

    # Back in the form, the credential shows as "set" and its value is nowhere in the page.
    page.click("#edit-tool")
    page.wait_for_selector("#credentials-set")
    assert page.input_value("input[data-credential='token']") == ""
    assert "s3cret-token" not in page.content()
    shot(page, "edit-credentials")

    # Deleting asks first, then the tool leaves the list and the database.
    page.click("#tool-form button:has-text('Cancel')")
    page.wait_for_selector("#delete-tool")
    page.once("dialog", lambda dialog: dialog.accept())
    page.click("#delete-tool")
    page.wait_for_url(f"{studio_server}/tools/")
    page.wait_for_selector(".tools-welcome")
    assert page.locator("#tool-index [data-tool='city_api']").count() == 0
    assert not Tool.objects.filter(name="city_api").exists()
    page.context.close()
