"""Validating OpenAPI documents with errors a user can act on: the document against its
version's schema (openapi-spec-validator), and every `$ref` local (an external ref would
fetch an arbitrary URL outside the address guard)."""

from __future__ import annotations

from typing import Any

from common.json_input import json_path
from tools_app.sources.openapi_load import SpecError
from tools_app.sources.openapi_schema import pointer_get

MAX_ERRORS = 50


def spec_version(document: dict[str, Any]) -> str:
    if str(document.get("swagger", "")).startswith("2."):
        return "2.0"
    version = str(document.get("openapi", ""))
    if version.startswith("3.0"):
        return "3.0"
    if version.startswith("3.1"):
        return "3.1"
    raise SpecError(
        "Not an OpenAPI document: expected 'openapi: 3.0.x', 'openapi: 3.1.x' or "
        "'swagger: \"2.0\"' at the top.",
        [{"path": "$", "message": "missing or unsupported 'openapi'/'swagger' version"}],
    )


def _walk_refs(node: Any, parts: list[Any]):
    if isinstance(node, dict):
        ref = node.get("$ref")
        if isinstance(ref, str):
            yield ref, parts
        for key, value in node.items():
            yield from _walk_refs(value, [*parts, key])
    elif isinstance(node, list):
        for index, value in enumerate(node):
            yield from _walk_refs(value, [*parts, index])


def _ref_errors(document: dict[str, Any]) -> list[dict[str, str]]:
    errors = []
    for ref, parts in _walk_refs(document, []):
        where = json_path([*parts, "$ref"])
        if not ref.startswith("#"):
            errors.append(
                {
                    "path": where,
                    "message": f"external $ref {ref!r} is not supported; "
                    "bundle the spec into one document",
                }
            )
            continue
        try:
            pointer_get(document, ref)
        except KeyError:
            errors.append({"path": where, "message": f"$ref {ref!r} points to nothing"})
    return errors


def _reason(error: Any, best_match: Any) -> str:
    """The specific failure under a oneOf/anyOf ("is not valid under any of the given
    schemas" hides it); the "$ref is required" branch is never the one the author meant."""
    while error.context:
        reasons = [e for e in error.context if "'$ref'" not in e.message]
        error = best_match(reasons or error.context)
    return error.message


def spec_validate(document: dict[str, Any]) -> list[dict[str, str]]:
    """Every problem found, as [{"path", "message"}]; an empty list means usable."""
    from jsonschema.exceptions import best_match
    from openapi_spec_validator.shortcuts import get_validator_cls

    try:
        spec_version(document)
    except SpecError as exc:
        return exc.errors
    errors = _ref_errors(document)
    if errors:
        # The validator itself would stop at the first broken ref with a stack trace.
        return errors[:MAX_ERRORS]
    try:
        validator = get_validator_cls(document)(document)
        for error in validator.iter_errors():
            message = error.message
            if error.context:
                message = f"{message.split(' is not valid')[0]}: {_reason(error, best_match)}"
            errors.append({"path": json_path(list(error.absolute_path)), "message": message})
            if len(errors) >= MAX_ERRORS:
                break
    except RecursionError:
        errors.append({"path": "$", "message": "the spec nests too deeply to validate"})
    except Exception as exc:  # the validator's own failures on odd input, reported as such
        errors.append({"path": "$", "message": f"could not validate the spec: {exc}"})
    return errors


# --- operations ------------------------------------------------------------------------
