"""The pure helpers and the generated form of lib/schema_form.js, run in Chromium on a
real studio page (no node test runner: the modules are the ones the browser loads)."""

from __future__ import annotations

import pytest

from tests.conftest import browser_login

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

ORDER_SCHEMA = {
    "type": "object",
    "$defs": {
        "line": {
            "type": "object",
            "properties": {
                "sku": {"type": "string"},
                "qty": {"type": "integer", "minimum": 1, "default": 1},
            },
            "required": ["sku", "qty"],
        }
    },
    "properties": {
        "customer": {"type": "string", "description": "Who orders."},
        "priority": {"type": "string", "enum": ["low", "normal", "high"], "default": "normal"},
        "express": {"type": "boolean", "default": False},
        "gift": {"type": "boolean"},
        "lines": {"type": "array", "items": {"$ref": "#/$defs/line"}, "minItems": 1},
        "tags": {"type": "array", "items": {"type": "string", "enum": ["a", "b", "c"]}},
        "address": {
            "type": "object",
            "properties": {"city": {"type": "string"}, "zip": {"type": ["string", "null"]}},
            "required": ["city"],
        },
        "note": {"type": "string"},
    },
    "required": ["customer", "lines", "priority"],
}

MOUNT = """async (schema) => {
  const mod = await import('/static/js/lib/schema_form.js');
  const box = document.createElement('div');
  box.id = 'sf-test';
  document.querySelector('#tool-main').replaceChildren(box);
  window.sfChanges = 0;
  window.sf = mod.mountSchemaForm(box, schema, { onChange: () => window.sfChanges++ });
  return window.sf.getValue();
}"""


@pytest.fixture
def page(studio_server, browser, owner):
    page = browser_login(browser, studio_server, "owner")
    page.goto(f"{studio_server}/tools/")
    page.wait_for_selector("#tools-app[data-ready='1']")
    yield page
    page.context.close()


def value(page):
    return page.evaluate("() => window.sf.getValue()")


def test_pure_helpers_parse_paths_json_names_and_skeletons(page):
    results = page.evaluate(
        """async (schema) => {
      const json = await import('/static/js/lib/schema_json.js');
      const form = await import('/static/js/lib/schema_form.js');
      return {
        syntax: json.parseJson('{\\n  "a": 1,\\n  "b" 2\\n}'),
        empty: json.parseJson('   '),
        ok: json.parseJson('[1, {"x": null}]'),
        paths: [json.fromPath('$.a[0].b'), json.fromPath("$['odd key'][2]"), json.fromPath('$')],
        back: json.toPath(['a', 0, 'odd key']),
        snake: json.toSnakeCase('Get Weather-Now'),
        problems: json.schemaProblems(
          {type: 'obj', properties: {a: {type: 'strng'}}, required: 'a'}),
        skeleton: form.skeleton(schema),
        nullable: form.normalize({anyOf: [{type: 'integer'}, {type: 'null'}]}, {}),
      };
    }""",
        ORDER_SCHEMA,
    )
    assert results["syntax"]["ok"] is False
    assert (results["syntax"]["line"], results["syntax"]["column"]) == (3, 7)
    assert "line 3, column 7" in results["syntax"]["message"]
    assert results["empty"]["ok"] is False
    assert results["ok"] == {"ok": True, "value": [1, {"x": None}]}
    assert results["paths"] == [["a", 0, "b"], ["odd key", 2], []]
    assert results["back"] == '$.a[0]["odd key"]'
    assert results["snake"] == "get_weather_now"
    assert [p["path"] for p in results["problems"]] == [
        "$.type",
        "$.properties.a.type",
        "$.required",
    ]
    # Required properties and defaults, one array item (minItems) shaped by its $ref.
    assert results["skeleton"] == {
        "customer": "",
        "priority": "normal",
        "express": False,
        "lines": [{"sku": "", "qty": 1}],
    }
    assert results["nullable"]["type"] == "integer" and results["nullable"]["nullable"] is True


def test_the_generated_form_covers_nested_arrays_optional_objects_and_enums(page):
    assert page.evaluate(MOUNT, ORDER_SCHEMA) == {
        "customer": "",
        "priority": "normal",
        "express": False,
        "lines": [{"sku": "", "qty": 1}],
    }
    form = page.locator("#sf-test")
    # Required properties come first, in the order of "required".
    names = form.locator(
        ".sf-root > .sf-props > [data-path] > .sf-label .sf-name, "
        ".sf-root > .sf-props > fieldset > legend .sf-name"
    )
    assert names.all_inner_texts()[:3] == ["customer", "lines", "priority"]

    form.locator("input[name='$.customer']").fill("Ada")
    form.locator("select[name='$.priority']").select_option(label="high")
    form.locator("input[name='$.lines[0].sku']").fill("X-1")
    form.locator("input[name='$.lines[0].qty']").fill("3")
    form.locator("[data-add='$.lines']").click()
    form.locator("input[name='$.lines[1].sku']").fill("Y-2")
    form.locator("select[name='$.gift']").select_option("true")
    form.locator("label:has(input[name='$.tags']):text('c')").click()
    # The optional object is off until toggled; then its own required field appears.
    assert not form.locator("input[name='$.address.city']").is_visible()
    form.locator("input[data-toggle='$.address']").check()
    form.locator("input[name='$.address.city']").fill("Paris")
    assert value(page) == {
        "customer": "Ada",
        "priority": "high",
        "express": False,
        "gift": True,
        "lines": [{"sku": "X-1", "qty": 3}, {"sku": "Y-2", "qty": 1}],
        "tags": ["c"],
        "address": {"city": "Paris"},
    }
    assert page.evaluate("() => window.sfChanges") > 0

    # Removing the first line renumbers the rest (paths stay right for highlighting).
    form.locator("li.sf-item").first.locator(".sf-remove").click()
    assert value(page)["lines"] == [{"sku": "Y-2", "qty": 1}]
    assert form.locator("input[name='$.lines[0].sku']").input_value() == "Y-2"

    # Toggling the object off leaves it out again.
    form.locator("input[data-toggle='$.address']").uncheck()
    assert "address" not in value(page)


def test_set_value_keeps_what_the_form_cannot_show_and_highlight_finds_paths(page):
    page.evaluate(MOUNT, ORDER_SCHEMA)
    incoming = {
        "customer": 42,
        "priority": "urgent",
        "lines": [{"sku": "A", "qty": "two"}],
        "address": {"city": "Oslo", "zip": None},
        "extra": {"kept": True},
    }
    page.evaluate("(v) => window.sf.setValue(v)", incoming)
    # Values of the wrong type, unknown choices and unknown keys survive a round trip (a
    # checkbox shows its default when the value is absent).
    assert value(page) == {**incoming, "express": False}
    assert page.locator("#sf-test .sf-foreign:visible").count() == 3
    assert page.locator("input[data-toggle='$.address']").is_checked()

    found = page.evaluate(
        """() => [
      window.sf.highlight('$.lines[0].qty', "'two' is not of type 'integer'")?.dataset.path,
      window.sf.highlight('$', "'customer' is a required property")?.dataset.path,
      window.sf.highlight('$.nowhere.deep', 'x')?.dataset.path,
    ]"""
    )
    assert found == ["$.lines[0].qty", "$.customer", "$"]
    assert "sf-error" in page.locator("#sf-test [data-path='$.lines[0].qty']").get_attribute(
        "class"
    )
    page.evaluate("() => window.sf.clearHighlights()")
    assert page.locator("#sf-test .sf-error").count() == 0
    assert value(page) == {**incoming, "express": False}
