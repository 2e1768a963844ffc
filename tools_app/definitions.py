"""Tools defined in Python code: `create_tool` and the `ToolDefinition` it returns.

    from tools_app.definitions import create_tool      (also agents_core.definitions,
                                                        whose docstring has an example)

A definition in an installed app's `tools.py` (or reached by a code agent) is discovered
at start-up and synced into the database as a code-owned Tool row; running it goes through
the pipeline (tools_app.execution), which finds the definition through the agent side.
"""

from __future__ import annotations

import hashlib
import json
import logging
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from tools_app.names import RESERVED_MESSAGE, RESERVED_TOOL_NAMES

SNAKE_CASE = re.compile(r"^[a-z][a-z0-9_]*$")


Schema = Mapping[str, Any] | type | None


class DefinitionError(ValueError):
    """A code definition that cannot be used; raised when it is created."""


def schema_to_json_schema(schema: Schema) -> dict[str, Any] | None:
    """A JSON Schema dict from a dict or a pydantic model class (None stays None)."""
    if schema is None:
        return None
    if isinstance(schema, Mapping):
        return dict(schema)
    model_json_schema = getattr(schema, "model_json_schema", None)
    if callable(model_json_schema):
        return model_json_schema()
    raise DefinitionError(
        f"A schema must be a JSON Schema dict or a pydantic model, not {schema!r}"
    )


def _check_json_schema(schema: dict[str, Any] | None, what: str) -> None:
    if schema is None:
        return
    from jsonschema.exceptions import SchemaError
    from jsonschema.validators import validator_for

    try:
        validator_for(schema).check_schema(schema)
    except SchemaError as exc:
        raise DefinitionError(f"{what} is not a valid JSON Schema: {exc.message}") from exc


def fingerprint(data: Any) -> str:
    """A stable hash of the serializable part of a definition (to detect changes)."""
    text = json.dumps(data, sort_keys=True, default=repr, separators=(",", ":"))
    return hashlib.sha256(text.encode()).hexdigest()


@dataclass(eq=False)
class ToolDefinition:
    id: str
    description: str
    execute: Callable[..., Any] | None
    input_schema: dict[str, Any]
    output_schema: dict[str, Any] | None = None
    # Validates the payload that resumes a suspended call (ask_user answers, approvals).
    resume_schema: dict[str, Any] | None = None
    kind: str = "code"
    execution_mode: str = "sync"
    timeout: float = 30.0
    requires_approval: bool = False
    # False: a sync execute always runs in a thread of its own, never on its caller's
    # thread however fast it has been (a tool that may block on I/O; types/code/pace.py).
    inline: bool = True
    # What the model sees instead of the raw output.
    to_model_output: Callable[[Any], Any] | None = None
    # What the display and the transcript see; applied to input deltas and the output.
    transform: Callable[..., Any] | None = None
    on_input_start: Callable[..., Any] | None = None
    on_input_delta: Callable[..., Any] | None = None
    on_input_available: Callable[..., Any] | None = None
    on_output: Callable[..., Any] | None = None
    # After a result in a run: (the call's execution context) -> the events the run emits
    # next, each `{"type": ..., **fields}`; called in a thread (it may read the database).
    result_events: Callable[[Any], list[dict[str, Any]]] | None = None
    config: dict[str, Any] = field(default_factory=dict)

    @property
    def name(self) -> str:
        return self.id

    def fingerprint_data(self) -> dict[str, Any]:
        return {
            "description": self.description,
            "input_schema": self.input_schema,
            "output_schema": self.output_schema,
            "kind": self.kind,
            "execution_mode": self.execution_mode,
            "timeout": self.timeout,
            "config": self.config,
        }


def create_tool(
    *,
    id: str,  # noqa: A002 - the name Mastra uses
    description: str,
    execute: Callable[..., Any] | None = None,
    input_schema: Schema = None,
    output_schema: Schema = None,
    resume_schema: Schema = None,
    kind: str = "code",
    execution_mode: str = "sync",
    timeout: float = 30.0,
    requires_approval: bool = False,
    inline: bool = True,
    to_model_output: Callable[[Any], Any] | None = None,
    transform: Callable[..., Any] | None = None,
    on_input_start: Callable[..., Any] | None = None,
    on_input_delta: Callable[..., Any] | None = None,
    on_input_available: Callable[..., Any] | None = None,
    on_output: Callable[..., Any] | None = None,
    result_events: Callable[[Any], list[dict[str, Any]]] | None = None,
    config: dict[str, Any] | None = None,
) -> ToolDefinition:
    """Define a tool in code. `execute(input, context)` may be sync or async."""
    if not SNAKE_CASE.match(id or ""):
        raise DefinitionError(f"Tool id {id!r} must be snake_case (a-z, 0-9, _).")
    if id in RESERVED_TOOL_NAMES:
        raise DefinitionError(RESERVED_MESSAGE.format(name=id))
    if execute is None and kind == "code":
        raise DefinitionError(f"Tool {id!r} needs an execute(input, context) callable.")
    if execution_mode not in ("sync", "async"):
        raise DefinitionError(f"Tool {id!r}: execution_mode must be 'sync' or 'async'.")
    if timeout <= 0:
        raise DefinitionError(f"Tool {id!r}: timeout must be positive.")
    schemas = {
        "input_schema": schema_to_json_schema(input_schema) or {"type": "object", "properties": {}},
        "output_schema": schema_to_json_schema(output_schema),
        "resume_schema": schema_to_json_schema(resume_schema),
    }
    for what, schema in schemas.items():
        _check_json_schema(schema, f"Tool {id!r} {what}")
    return ToolDefinition(
        id=id,
        description=description,
        execute=execute,
        kind=kind,
        execution_mode=execution_mode,
        timeout=float(timeout),
        requires_approval=requires_approval,
        inline=inline,
        to_model_output=to_model_output,
        transform=transform,
        on_input_start=on_input_start,
        on_input_delta=on_input_delta,
        on_input_available=on_input_available,
        on_output=on_output,
        result_events=result_events,
        config=dict(config or {}),
        **schemas,
    )


def display_value(transform: Any, value: Any, phase: str, name: str) -> tuple[Any, bool]:
    """A value through a tool's display transform, as the chat, the transcript and traces
    show it: (shown, True), or (None, False) when the transform fails (the value is hidden)."""
    try:
        return transform(value, phase), True
    except Exception:  # noqa: BLE001 - a failing transform hides the value
        logging.getLogger(__name__).warning("Display transform of %s failed", name, exc_info=True)
        return None, False
