"""Input and output checks of the tool pipeline: JSON text parsing, JSON Schema errors with
their JSON paths, and the output as JSON can carry it."""

from __future__ import annotations

import json
from functools import lru_cache
from typing import Any

from jsonschema import Draft202012Validator
from jsonschema.exceptions import SchemaError
from jsonschema.validators import validator_for

from studio.json_input import JSONInputError, check_nesting, json_loads, json_path
from tools_app.errors import InputError, ToolError


def parse_input_text(text: str) -> Any:
    """Input typed as JSON text, held to the limits of all JSON from outside (depth, NUL,
    numbers: studio.json_input); a syntax error comes with its line and column."""
    try:
        return json_loads(text, max_string_chars=0)
    except JSONInputError as exc:
        raise InputError(exc.message, errors=exc.extra["errors"]) from None


def schema_errors(schema: dict[str, Any] | None, value: Any) -> list[dict[str, str]]:
    """Every error of `value` against `schema`, each with its JSON path, sorted by path."""
    if not schema:
        return []
    validator = _validator(json.dumps(schema, sort_keys=True))
    if isinstance(validator, str):
        return [{"path": "$", "message": f"The tool's schema is invalid: {validator}"}]
    errors = [
        {"path": json_path(error.absolute_path), "message": error.message}
        for error in validator.iter_errors(value)
    ]
    return sorted(errors, key=lambda e: e["path"])


@lru_cache(maxsize=512)
def _validator(schema_text: str) -> Any:
    """A checked validator per distinct schema (checking a schema costs far more than
    validating a small input); the error message for an invalid schema."""
    schema = json.loads(schema_text)
    cls = validator_for(schema, default=Draft202012Validator)
    try:
        cls.check_schema(schema)
    except SchemaError as exc:
        return exc.message
    return cls(schema, format_checker=cls.FORMAT_CHECKER)


def validate_input(schema: dict[str, Any] | None, value: Any) -> None:
    """Raise InputError with every schema error of `value` (each with its JSON path)."""
    errors = schema_errors(schema, value)
    if errors:
        raise InputError(
            summary("Input does not match the tool's input schema", errors), errors=errors
        )


def summary(prefix: str, errors: list[dict[str, str]]) -> str:
    first = errors[0]
    more = f" (and {len(errors) - 1} more)" if len(errors) > 1 else ""
    return f"{prefix}: {first['path']}: {first['message']}{more}"


def json_safe(value: Any) -> Any:
    """The output as JSON carries it, no deeper than STUDIO_MAX_JSON_DEPTH; else a tool error."""
    try:
        check_nesting(text := json.dumps(value, allow_nan=False))
        return json.loads(text)
    except (TypeError, ValueError, RecursionError, JSONInputError) as exc:
        raise ToolError(f"The tool returned a value the studio cannot keep: {exc}") from None
