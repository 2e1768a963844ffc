"""The JSON a test case is made of, its JSON Schema, and the check that gives every
error with its JSON path (`$.turns[0].expect[1].pattern`)."""

from __future__ import annotations

from typing import Any

from common.patterns import pattern_problem, schema_pattern_errors
from providers.gate import model_field_errors
from tools_app.execution import schema_errors

_NAME = {"type": "string", "minLength": 1, "maxLength": 100}
_LIMIT = {"type": "number", "minimum": 0}
_THRESHOLD = {"type": "number", "minimum": 0, "maximum": 1}


def _exp(kind: str, required: list[str], props: dict[str, Any]) -> dict[str, Any]:
    return {
        "type": "object",
        "properties": {"type": {"const": kind}, **props},
        "required": ["type", *required],
        "additionalProperties": False,
    }


EXPECTATIONS = [
    _exp(
        "tool_called",
        ["tool"],
        {
            "tool": _NAME,
            "args": {},
            "argsSchema": {"type": "object"},
            "count": {"type": "integer", "minimum": 0},
        },
    ),
    _exp("tool_not_called", ["tool"], {"tool": _NAME}),
    _exp("call_order", ["tools"], {"tools": {"type": "array", "items": _NAME, "minItems": 2}}),
    _exp(
        "answer_contains",
        ["value"],
        {"value": {"type": "string", "minLength": 1}, "ignoreCase": {"type": "boolean"}},
    ),
    _exp("answer_regex", ["pattern"], {"pattern": {"type": "string", "minLength": 1}}),
    _exp("answer_equals", ["value"], {"value": {"type": "string"}}),
    _exp("answer_json", [], {"schema": {"type": "object"}}),
    _exp("max_steps", ["value"], {"value": {"type": "integer", "minimum": 1}}),
    _exp("max_tokens", ["value"], {"value": {"type": "integer", "minimum": 0}}),
    _exp("max_cost", ["value"], {"value": _LIMIT}),
    _exp("max_duration_ms", ["value"], {"value": _LIMIT}),
    _exp("no_error", [], {}),
    _exp(
        "judge",
        ["rubric"],
        {
            "rubric": {"type": "string", "minLength": 1, "maxLength": 20000},
            "threshold": _THRESHOLD,
            "model": {"type": "string", "pattern": r"^[\w.-]+/\S+$"},
        },
    ),
    _exp(
        "similar",
        ["reference"],
        {"reference": {"type": "string", "minLength": 1}, "threshold": _THRESHOLD},
    ),
]
KINDS = [schema["properties"]["type"]["const"] for schema in EXPECTATIONS]

ANSWER = {
    "type": "object",
    "properties": {
        # Which suspended call this answers: a tool name (binding key) or a suspension
        # kind (ask-user, plan-approval, approval, client-function, widget).
        "tool": _NAME,
        "kind": {"enum": ["ask-user", "plan-approval", "approval", "client-function", "widget"]},
        "payload": {"type": "object"},
    },
    "required": ["payload"],
    "anyOf": [{"required": ["tool"]}, {"required": ["kind"]}],
    "additionalProperties": False,
}

CASE_SPEC = {
    "type": "object",
    "properties": {
        "turns": {
            "type": "array",
            "minItems": 1,
            "maxItems": 50,
            "items": {
                "type": "object",
                "properties": {
                    "message": {"type": "string", "minLength": 1, "maxLength": 100000},
                    "answers": {"type": "array", "items": ANSWER, "maxItems": 50},
                    "expect": {"type": "array", "items": {"type": "object"}, "maxItems": 100},
                },
                "required": ["message"],
                "additionalProperties": False,
            },
        },
        "options": {"type": "object"},
    },
    "required": ["turns"],
    "additionalProperties": False,
}


def spec_errors(spec: Any, *, path: str = "$") -> list[dict[str, str]]:
    """Every error of a case's spec, with JSON paths rooted at `path`."""
    errors = schema_errors(CASE_SPEC, spec)
    if not errors:
        for t, turn in enumerate(spec["turns"]):
            for e, exp in enumerate(turn.get("expect") or []):
                errors += _expectation_errors(exp, f"$.turns[{t}].expect[{e}]")
    return [{**error, "path": path + error["path"][1:]} for error in errors]


def _expectation_errors(exp: dict[str, Any], at: str) -> list[dict[str, str]]:
    kind = exp.get("type")
    if kind not in KINDS:
        return [{"path": f"{at}.type", "message": f"must be one of: {', '.join(KINDS)}"}]
    errors = [
        {**error, "path": at + error["path"][1:]}
        for error in schema_errors(EXPECTATIONS[KINDS.index(kind)], exp)
    ]
    if not errors and kind == "answer_regex":
        problem = pattern_problem(exp["pattern"])
        if problem:
            errors.append({"path": f"{at}.pattern", "message": problem})
    if not errors and kind == "judge" and "model" in exp:
        # The judge's model passes the gate every model call passes (no base: the judge
        # is called at its provider's own endpoint or a credential's server).
        errors += model_field_errors(exp["model"], f"{at}.model")
    if not errors and kind == "tool_called" and "argsSchema" in exp:
        from jsonschema import Draft202012Validator, SchemaError

        try:
            Draft202012Validator.check_schema(exp["argsSchema"])
        except SchemaError as exc:
            errors.append({"path": f"{at}.argsSchema", "message": exc.message})
        errors += schema_pattern_errors(exp["argsSchema"], f"{at}.argsSchema")
    if not errors and kind == "answer_json" and "schema" in exp:
        from jsonschema import Draft202012Validator, SchemaError

        try:
            Draft202012Validator.check_schema(exp["schema"])
        except SchemaError as exc:
            errors.append({"path": f"{at}.schema", "message": exc.message})
        errors += schema_pattern_errors(exp["schema"], f"{at}.schema")
    return errors


EXPORT_SCHEMA = {
    "type": "object",
    "properties": {
        "version": {"const": 1},
        "agent": {"type": "string"},
        "cases": {
            "type": "array",
            "items": {
                "type": "object",
                "properties": {
                    "name": {"type": "string", "minLength": 1, "maxLength": 200},
                    "description": {"type": "string"},
                    "spec": {"type": "object"},
                },
                "required": ["name", "spec"],
            },
        },
        "suites": {
            "type": "array",
            "items": {
                "type": "object",
                "properties": {
                    "slug": {"type": "string", "pattern": "^[-a-zA-Z0-9_]{1,100}$"},
                    "name": {"type": "string", "maxLength": 200},
                    "repeat": {"type": "integer", "minimum": 1, "maximum": 100},
                    "cases": {"type": "array", "items": {"type": "string"}},
                },
                "required": ["slug", "cases"],
            },
        },
    },
    "required": ["version", "cases"],
}
