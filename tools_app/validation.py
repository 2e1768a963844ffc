"""Input and output checks of the tool pipeline: JSON text parsing, JSON Schema errors with
their JSON paths, and the output as JSON can carry it.

A schema is compiled once and reused (`compiled_schema`): jsonschema-rs, compiled in Rust,
answers whether a value is valid in well under a microsecond; only a value it refuses is
walked again by the `jsonschema` package, whose messages and JSON paths the studio shows.
A value is valid when either of them accepts it (their verdicts differ only at the edges
of formats and regular-expression dialects; a schema jsonschema-rs cannot compile is
checked by `jsonschema` alone).
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

import jsonschema_rs
from django.conf import settings
from jsonschema import Draft202012Validator
from jsonschema.exceptions import SchemaError
from jsonschema.validators import validator_for

from common.json_input import JSONInputError, check_nesting, json_loads, json_path
from tools_app.errors import InputError, ToolError

# Compiled schemas by the identity of the schema object, in front of the cache by content
# (serializing a schema to find it by content costs more than validating a small value).
# Schemas are never changed in place once used: a changed schema is a new object.
_BY_IDENTITY: dict[int, tuple[Any, CompiledSchema]] = {}
_BY_IDENTITY_MAX = 1024


def parse_input_text(text: str) -> Any:
    """Input typed as JSON text, held to the limits of all JSON from outside (depth, NUL,
    numbers: common.json_input); a syntax error comes with its line and column."""
    try:
        return json_loads(text, max_string_chars=0)
    except JSONInputError as exc:
        raise InputError(exc.message, errors=exc.extra["errors"]) from None


@dataclass(frozen=True, eq=False)
class CompiledSchema:
    """One schema, compiled: `fast` (jsonschema-rs; None when it cannot compile the
    schema) decides validity, `full` (jsonschema, checked) lists the errors; `invalid` is
    the message of a schema that is not valid JSON Schema."""

    fast: Any
    full: Any
    invalid: str = ""

    def errors(self, value: Any) -> list[dict[str, str]]:
        """Every error of `value`, each with its JSON path, sorted by path."""
        if self.invalid:
            return [{"path": "$", "message": f"The tool's schema is invalid: {self.invalid}"}]
        if self.fast is not None and self._fast_accepts(value):
            return []
        errors = [
            {"path": json_path(error.absolute_path), "message": error.message}
            for error in self.full.iter_errors(value)
        ]
        return sorted(errors, key=lambda e: e["path"])

    def _fast_accepts(self, value: Any) -> bool:
        try:
            return bool(self.fast.is_valid(value))
        except (ValueError, TypeError, OverflowError):
            return False  # a value that is not JSON (a tuple key, bytes): jsonschema decides


def compiled_schema(schema: dict[str, Any]) -> CompiledSchema:
    """The compiled form of `schema`, built once per distinct schema and reused."""
    hit = _BY_IDENTITY.get(id(schema))
    if hit is not None and hit[0] is schema:
        return hit[1]
    compiled = _compiled(json.dumps(schema, sort_keys=True))
    if len(_BY_IDENTITY) >= _BY_IDENTITY_MAX:
        _BY_IDENTITY.clear()
    _BY_IDENTITY[id(schema)] = (schema, compiled)  # holding the schema keeps its id unique
    return compiled


def schema_errors(schema: dict[str, Any] | None, value: Any) -> list[dict[str, str]]:
    """Every error of `value` against `schema`, each with its JSON path, sorted by path."""
    if not schema:
        return []
    return compiled_schema(schema).errors(value)


def _refuse_remote(uri: str) -> Any:
    raise ValueError(f"external $ref {uri!r} is not fetched")


@lru_cache(maxsize=512)
def _compiled(schema_text: str) -> CompiledSchema:
    """Checking a schema costs far more than validating a small input: once per schema."""
    schema = json.loads(schema_text)
    cls = validator_for(schema, default=Draft202012Validator)
    try:
        cls.check_schema(schema)
    except SchemaError as exc:
        return CompiledSchema(fast=None, full=None, invalid=exc.message)
    full = cls(schema, format_checker=cls.FORMAT_CHECKER)
    try:
        # Formats are checked (as jsonschema's format checker does); a remote $ref is
        # never fetched (jsonschema-rs would): such a schema is left to jsonschema.
        fast = jsonschema_rs.validator_for(schema, validate_formats=True, retriever=_refuse_remote)
    except Exception:  # noqa: BLE001 - a schema it cannot compile is checked by jsonschema
        fast = None
    return CompiledSchema(fast=fast, full=full)


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
    """The output as JSON carries it, no deeper than STUDIO_MAX_JSON_DEPTH; else a tool error.
    Plain JSON values (dicts with text keys, lists, text, finite numbers, booleans, null)
    are copied directly; anything else goes through a JSON round trip."""
    copied = _plain_copy(value, settings.STUDIO_MAX_JSON_DEPTH)
    if copied is not _NOT_PLAIN:
        return copied
    try:
        check_nesting(text := json.dumps(value, allow_nan=False))
        return json.loads(text)
    except (TypeError, ValueError, RecursionError, JSONInputError) as exc:
        raise ToolError(f"The tool returned a value the studio cannot keep: {exc}") from None


_NOT_PLAIN = object()
_SCALARS = frozenset({str, int, bool, type(None)})


def _plain_copy(value: Any, depth: int) -> Any:
    """A copy of a value made only of JSON's own types (exactly: no subclasses), equal to
    what a JSON round trip gives; _NOT_PLAIN for anything else or nesting past `depth`."""
    kind = type(value)
    if kind in _SCALARS:
        return value
    if kind is float:
        return value if math.isfinite(value) else _NOT_PLAIN
    if depth <= 0:
        return _NOT_PLAIN
    if kind is dict:
        copy = {}
        for key, item in value.items():
            if type(key) is not str:
                return _NOT_PLAIN
            item = _plain_copy(item, depth - 1)
            if item is _NOT_PLAIN:
                return _NOT_PLAIN
            copy[key] = item
        return copy
    if kind is list:
        items = []
        for item in value:
            item = _plain_copy(item, depth - 1)
            if item is _NOT_PLAIN:
                return _NOT_PLAIN
            items.append(item)
        return items
    return _NOT_PLAIN
