"""Reading an OpenAPI document from text (JSON or YAML), under the limits of all input
from outside (common.json_input): nesting depth, NUL, and for YAML, whose aliases repeat
what they name, the number of values."""

from __future__ import annotations

from typing import Any

import yaml

from common.json_input import JSONInputError, json_loads, value_problem

# The most values (objects, arrays, scalars) a YAML spec may expand to.
MAX_SPEC_VALUES = 1_000_000


class SpecError(ValueError):
    """A spec that cannot be used: `errors` is [{"path": "$.paths...", "message": ...}]."""

    def __init__(self, message: str, errors: list[dict[str, str]] | None = None) -> None:
        super().__init__(message)
        self.errors = errors or []


def spec_load(text: str | bytes) -> dict[str, Any]:
    """Parse a pasted or uploaded document (JSON or YAML)."""
    if isinstance(text, bytes):
        try:
            text = text.decode("utf-8")
        except UnicodeDecodeError:
            raise SpecError("The file is not UTF-8 text.") from None
    if not text.strip():
        raise SpecError("The spec is empty.")
    try:
        # Held to the limits of all JSON from outside (depth, NUL), whole strings allowed.
        document = json_loads(text, max_string_chars=0)
    except JSONInputError as exc:
        if exc.code != "invalid_json":
            raise SpecError(exc.message, exc.extra["errors"]) from None
        document = _yaml_load(text)
    if not isinstance(document, dict):
        raise SpecError("The spec must be a JSON/YAML object with an 'openapi' or 'swagger' key.")
    return document


def _yaml_load(text: str) -> Any:
    try:
        document = yaml.safe_load(text)
    except RecursionError:
        raise SpecError("The spec is nested too deeply to be read.") from None
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" (line {mark.line + 1}, column {mark.column + 1})" if mark else ""
        raise SpecError(f"The spec is neither JSON nor YAML{where}: {exc}") from None
    # YAML aliases repeat what they name: the walk is bounded by a count, not the text size.
    problem = value_problem(document, max_nodes=MAX_SPEC_VALUES)
    if problem is not None:
        raise SpecError(problem.message, problem.extra["errors"])
    return document
