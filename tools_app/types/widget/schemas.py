"""The JSON Schema of each widget kind: what a widget tool's input (its description) must
be. docs/tools.md ("Widget tools") shows an example of each. Links and images are http(s)
only; text is plain text (the chat shows it as text, never as markup)."""

from __future__ import annotations

from typing import Any

HTTP_URL = {"type": "string", "maxLength": 2000, "pattern": "^[Hh][Tt][Tt][Pp][Ss]?://[^\\s]+$"}
SHORT = {"type": "string", "minLength": 1, "maxLength": 200}
TEXT = {"type": "string", "maxLength": 4000}
CELL = {"type": ["string", "number", "boolean", "null"]}
IDENT = {"type": "string", "pattern": "^[A-Za-z_][A-Za-z0-9_]{0,63}$"}

CARD = {
    "type": "object",
    "description": "A card: a title, text, an image, label/value facts and links.",
    "properties": {
        "title": SHORT,
        "subtitle": {"type": "string", "maxLength": 300},
        "body": TEXT,
        "image": HTTP_URL,
        "url": HTTP_URL,
        "fields": {
            "type": "array",
            "maxItems": 20,
            "items": {
                "type": "object",
                "properties": {"label": SHORT, "value": {"type": ["string", "number", "boolean"]}},
                "required": ["label", "value"],
                "additionalProperties": False,
            },
        },
        "links": {
            "type": "array",
            "maxItems": 5,
            "items": {
                "type": "object",
                "properties": {"label": SHORT, "url": HTTP_URL},
                "required": ["label", "url"],
                "additionalProperties": False,
            },
        },
    },
    "required": ["title"],
    "additionalProperties": False,
}

TABLE = {
    "type": "object",
    "description": "A table: column labels and rows of cells (one cell per column).",
    "properties": {
        "title": SHORT,
        "columns": {"type": "array", "minItems": 1, "maxItems": 20, "items": SHORT},
        "rows": {
            "type": "array",
            "maxItems": 200,
            "items": {"type": "array", "maxItems": 20, "items": CELL},
        },
    },
    "required": ["columns", "rows"],
    "additionalProperties": False,
}

OPTION = {
    "anyOf": [
        SHORT,
        {
            "type": "object",
            "properties": {
                "value": SHORT,
                "label": SHORT,
                "description": {"type": "string", "maxLength": 500},
            },
            "required": ["value"],
            "additionalProperties": False,
        },
    ]
}

CHOICE = {
    "type": "object",
    "description": "A choice list the user answers: one option, or several with multiple.",
    "properties": {
        "question": {"type": "string", "minLength": 1, "maxLength": 500},
        "options": {"type": "array", "minItems": 2, "maxItems": 50, "items": OPTION},
        "multiple": {"type": "boolean", "default": False},
    },
    "required": ["question", "options"],
    "additionalProperties": False,
}

FIELD_TYPES = ["text", "textarea", "number", "integer", "boolean", "select", "date", "email"]

FORM = {
    "type": "object",
    "description": "A form the user fills in; the answer is {values: {name: value}}.",
    "properties": {
        "title": SHORT,
        "description": {"type": "string", "maxLength": 1000},
        "submit_label": {"type": "string", "minLength": 1, "maxLength": 40},
        "fields": {
            "type": "array",
            "minItems": 1,
            "maxItems": 30,
            "items": {
                "type": "object",
                "properties": {
                    "name": IDENT,
                    "label": SHORT,
                    "type": {"enum": FIELD_TYPES, "default": "text"},
                    "required": {"type": "boolean", "default": False},
                    "placeholder": {"type": "string", "maxLength": 200},
                    "options": {"type": "array", "minItems": 1, "maxItems": 50, "items": SHORT},
                    "default": CELL,
                    "min": {"type": "number"},
                    "max": {"type": "number"},
                },
                "required": ["name", "label"],
                "additionalProperties": False,
                "if": {"properties": {"type": {"const": "select"}}, "required": ["type"]},
                "then": {"required": ["options"]},
            },
        },
    },
    "required": ["title", "fields"],
    "additionalProperties": False,
}

CHART = {
    "type": "object",
    "description": "A line or bar chart: x labels and one or more series of numbers.",
    "properties": {
        "title": SHORT,
        "type": {"enum": ["line", "bar"], "default": "line"},
        "x": {
            "type": "array",
            "minItems": 1,
            "maxItems": 500,
            "items": {"type": ["string", "number"]},
        },
        "series": {
            "type": "array",
            "minItems": 1,
            "maxItems": 8,
            "items": {
                "type": "object",
                "properties": {
                    "name": SHORT,
                    "values": {
                        "type": "array",
                        "maxItems": 500,
                        "items": {"type": ["number", "null"]},
                    },
                },
                "required": ["name", "values"],
                "additionalProperties": False,
            },
        },
        "x_label": {"type": "string", "maxLength": 100},
        "y_label": {"type": "string", "maxLength": 100},
    },
    "required": ["title", "x", "series"],
    "additionalProperties": False,
}

WIDGET_SCHEMAS: dict[str, dict[str, Any]] = {
    "card": CARD,
    "table": TABLE,
    "choice": CHOICE,
    "form": FORM,
    "chart": CHART,
}
# Kinds whose call waits for the user's answer (the run suspends, as ask_user does).
INTERACTIVE = {"choice", "form"}


def option_value(option: Any) -> str:
    return option["value"] if isinstance(option, dict) else option


def answer_schema(kind: str, widget: dict[str, Any]) -> dict[str, Any] | None:
    """The JSON Schema of the answer that resumes an interactive widget's call."""
    if kind == "choice":
        values = [option_value(o) for o in widget["options"]]
        one = {"enum": values}
        answer = (
            {"type": "array", "items": one, "minItems": 1, "uniqueItems": True}
            if widget.get("multiple")
            else one
        )
        return {
            "type": "object",
            "properties": {"answer": answer},
            "required": ["answer"],
            "additionalProperties": False,
        }
    if kind == "form":
        properties = {field["name"]: _field_schema(field) for field in widget["fields"]}
        required = [field["name"] for field in widget["fields"] if field.get("required")]
        return {
            "type": "object",
            "properties": {
                "values": {
                    "type": "object",
                    "properties": properties,
                    "required": required,
                    "additionalProperties": False,
                }
            },
            "required": ["values"],
            "additionalProperties": False,
        }
    return None


def _field_schema(field: dict[str, Any]) -> dict[str, Any]:
    kind = field.get("type", "text")
    if kind in ("number", "integer"):
        schema: dict[str, Any] = {"type": kind}
        if "min" in field:
            schema["minimum"] = field["min"]
        if "max" in field:
            schema["maximum"] = field["max"]
        return schema
    if kind == "boolean":
        return {"type": "boolean"}
    if kind == "select":
        return {"enum": list(field["options"])}
    schema = {"type": "string", "maxLength": 4000}
    if field.get("required"):
        schema["minLength"] = 1
    if kind == "date":
        schema["pattern"] = "^\\d{4}-\\d{2}-\\d{2}$"
    if kind == "email":
        schema["pattern"] = "^[^@\\s]+@[^@\\s]+$"
    return schema
