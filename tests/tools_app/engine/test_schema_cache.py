"""Schemas are compiled once and reused (tools_app/validation.py), and the reused
validator still reports every error with its JSON path."""

from __future__ import annotations

import copy

from tools_app.validation import _compiled, compiled_schema, json_safe, schema_errors

SCHEMA = {
    "type": "object",
    "properties": {
        "items": {
            "type": "array",
            "items": {"type": "object", "properties": {"qty": {"type": "integer"}}},
        },
        "city": {"type": "string", "minLength": 2},
    },
    "required": ["city"],
    "additionalProperties": False,
}


def test_a_schema_is_compiled_once_and_reused():
    schema = copy.deepcopy(SCHEMA)
    first = compiled_schema(schema)
    misses = _compiled.cache_info().misses

    assert compiled_schema(schema) is first
    assert compiled_schema(copy.deepcopy(SCHEMA)) is first  # an equal schema, another object
    assert _compiled.cache_info().misses == misses
    assert first.fast is not None  # the compiled (jsonschema-rs) check answers


def test_the_reused_validator_still_reports_every_json_path():
    schema = copy.deepcopy(SCHEMA)
    bad = {"items": [{"qty": 1}, {"qty": "two"}], "city": "X", "extra": True}

    for _ in range(2):  # the second call reuses the compiled schema
        errors = schema_errors(schema, bad)
        paths = [error["path"] for error in errors]
        assert paths == ["$", "$.city", "$.items[1].qty"]
        assert "'two' is not of type 'integer'" in errors[2]["message"]

    assert schema_errors(schema, {"items": [], "city": "Oslo"}) == []


def test_a_replaced_schema_gets_its_own_validator():
    schema = copy.deepcopy(SCHEMA)
    compiled_schema(schema)
    stricter = {**schema, "required": ["city", "items"]}

    assert compiled_schema(stricter) is not compiled_schema(schema)
    assert [e["path"] for e in schema_errors(stricter, {"city": "Oslo"})] == ["$"]
    assert schema_errors(schema, {"city": "Oslo"}) == []


def test_a_schema_with_a_remote_ref_is_checked_without_fetching_it():
    schema = {
        "type": "object",
        "properties": {"address": {"$ref": "https://schemas.example.invalid/address.json"}},
    }

    assert compiled_schema(schema).fast is None  # jsonschema-rs would fetch it: not used
    assert schema_errors(schema, {"name": "x"}) == []
    assert [e["path"] for e in schema_errors(schema, ["not an object"])] == ["$"]


def test_an_invalid_schema_is_reported_at_the_root():
    errors = schema_errors({"type": "no-such-type"}, {})

    assert errors[0]["path"] == "$"
    assert errors[0]["message"].startswith("The tool's schema is invalid")


def test_json_safe_copies_plain_values_and_converts_the_rest_as_json_does():
    plain = {"a": [1, 2.5, "x", None, True], "b": {"c": []}}
    copied = json_safe(plain)

    assert copied == plain and copied is not plain and copied["a"] is not plain["a"]
    assert json_safe({"t": (1, 2), 3: "three"}) == {"t": [1, 2], "3": "three"}


def test_a_value_that_is_not_json_is_left_to_jsonschema():
    schema = {"type": "object", "properties": {"blob": {"type": "string"}}}

    assert [e["path"] for e in schema_errors(schema, {"blob": b"bytes"})] == ["$.blob"]
    assert schema_errors(schema, {("a", "tuple"): 1}) == []  # jsonschema ignores such keys
