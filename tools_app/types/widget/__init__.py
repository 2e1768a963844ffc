"""Widget tools: the call's input is a small JSON description of a widget (card, table,
choice list, form, chart; schemas in tools_app.types.widget.schemas) that the chat draws
for the user. `config.widget` names the kind.

- card, table, chart: the description is checked (jsonschema, then what a schema cannot
  say: one cell per column, one value per x) and is the result, `{"widget": {...}}`,
  which the chat draws in place of the raw output.
- choice, form: the call suspends with `{"kind": "widget", "widget", "resumeSchema"}`
  (the same suspension as ask_user: the run waits, survives a restart, and the answer
  resumes it); the answer, checked against `resumeSchema`, is the result.

A bad description is a tool error naming each JSON path, so the model can correct it.
Code agents declare one with `create_widget_tool` (a code definition of kind "widget").
"""

from __future__ import annotations

import copy
from typing import Any, ClassVar

from tools_app.types import ConfigError, ToolType
from tools_app.types.widget.schemas import (
    INTERACTIVE,
    WIDGET_SCHEMAS,
    answer_schema,
    option_value,
)

CONSOLE_ERROR = (
    "A {kind} widget waits for the user's answer in the preview chat; it cannot be "
    "answered from the console, the API or the CLI."
)
SUSPEND_KIND = "widget"


def _duplicates(values: list[Any], path: str) -> list[dict[str, str]]:
    seen: set[Any] = set()
    errors = []
    for index, value in enumerate(values):
        if value in seen:
            errors.append({"path": path.format(index), "message": f"{value!r} appears twice"})
        seen.add(value)
    return errors


def widget_errors(kind: str, widget: Any) -> list[dict[str, str]]:
    """Every problem of a widget description, each with its JSON path."""
    from tools_app.validation import schema_errors

    errors = schema_errors(WIDGET_SCHEMAS[kind], widget)
    if errors:
        return errors
    if kind == "table":
        width = len(widget["columns"])
        errors += [
            {"path": f"$.rows[{i}]", "message": f"has {len(row)} cells for {width} columns"}
            for i, row in enumerate(widget["rows"])
            if len(row) != width
        ]
    elif kind == "chart":
        width = len(widget["x"])
        errors += [
            {
                "path": f"$.series[{i}].values",
                "message": f"has {len(s['values'])} values for {width} x",
            }
            for i, s in enumerate(widget["series"])
            if len(s["values"]) != width
        ]
    elif kind == "choice":
        values = [option_value(o) for o in widget["options"]]
        errors += _duplicates(values, "$.options[{}]")
    elif kind == "form":
        errors += _duplicates([f["name"] for f in widget["fields"]], "$.fields[{}].name")
    return errors


def widget_check(kind: str, widget: Any) -> dict[str, Any]:
    from tools_app.errors import ToolError

    errors = widget_errors(kind, widget)
    if errors:
        first = errors[0]
        more = f" (and {len(errors) - 1} more)" if len(errors) > 1 else ""
        raise ToolError(
            f"Invalid {kind} widget: {first['path']}: {first['message']}{more}", errors=errors
        )
    return {"kind": kind, **copy.deepcopy(widget)}


def widget_answer(kind: str, widget: dict[str, Any], payload: Any) -> Any:
    """The answer that resumed the call, checked against the widget's answer schema."""
    from tools_app.errors import ToolError
    from tools_app.validation import schema_errors

    schema = answer_schema(kind, widget)
    errors = schema_errors(schema, payload)
    if errors:
        raise ToolError(
            f"Invalid answer: {errors[0]['path']}: {errors[0]['message']}", errors=errors
        )
    return payload


class WidgetToolType(ToolType):
    kind = "widget"
    label = "Widget (card, table, choice list, form, chart shown in the chat)"
    config_schema: ClassVar[dict[str, Any]] = {
        "type": "object",
        "properties": {
            "widget": {
                "type": "string",
                "enum": sorted(WIDGET_SCHEMAS),
                "description": "What the chat draws. choice and form wait for the user's answer.",
            }
        },
        "required": ["widget"],
        "additionalProperties": False,
    }

    def validate_config(self, config: dict[str, Any]) -> dict[str, Any]:
        config = super().validate_config(config)
        if config["widget"] not in WIDGET_SCHEMAS:
            raise ConfigError({"config.widget": f"must be one of {sorted(WIDGET_SCHEMAS)}"})
        return config

    def input_schema_for(self, config: dict[str, Any], given: Any) -> dict[str, Any] | None:
        """A widget tool left without input properties gets its widget's schema."""
        if isinstance(given, dict) and given.get("properties"):
            return None
        return copy.deepcopy(WIDGET_SCHEMAS[config["widget"]])

    async def execute(self, tool: Any, input: Any, context: Any) -> Any:  # noqa: A002
        from tools_app.errors import ToolError, ToolSuspended

        kind = (tool.config or {}).get("widget")
        if kind not in WIDGET_SCHEMAS:
            raise ToolError(f"The tool's config.widget must be one of {sorted(WIDGET_SCHEMAS)}.")
        widget = widget_check(kind, input)
        if kind not in INTERACTIVE:
            return {"widget": widget}
        description = {k: v for k, v in widget.items() if k != "kind"}
        if context.resume_payload is not None:
            return widget_answer(kind, description, context.resume_payload)
        if context.run is None:
            raise ToolError(CONSOLE_ERROR.format(kind=kind))
        raise ToolSuspended(
            {
                "kind": SUSPEND_KIND,
                "widget": widget,
                "resumeSchema": answer_schema(kind, description),
            }
        )


tool_type = WidgetToolType()


def create_widget_tool(*, id: str, widget: str, description: str, **options: Any) -> Any:  # noqa: A002
    """A widget tool defined in code: the model calls it with a description of `widget`
    (its schema is the tool's input schema)."""
    from tools_app.definitions import DefinitionError, create_tool

    if widget not in WIDGET_SCHEMAS:
        raise DefinitionError(f"Tool {id!r}: widget must be one of {sorted(WIDGET_SCHEMAS)}.")
    options.setdefault("timeout", 3600.0 if widget in INTERACTIVE else 30.0)
    return create_tool(
        id=id,
        kind="widget",
        description=description,
        input_schema=WIDGET_SCHEMAS[widget],
        config={"widget": widget},
        **options,
    )
