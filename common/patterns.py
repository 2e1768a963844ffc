"""Regular expressions that users write, matched in time linear in the text.

Python's `re` backtracks: a pattern such as `(a+)+$` takes seconds of CPU per match at
two dozen characters, and doubles with each one more, so one pattern in a test case can
hold a worker for ever. Every pattern a user gives is compiled and matched here with RE2
(`google-re2`), which never backtracks: its cost grows with the length of the text, not
exponentially. RE2 has no backreferences (`\\1`) and no lookaround (`(?=`, `(?<!`); a
pattern that uses them is refused where it is saved, with the reason.

JSON Schema `pattern` and `patternProperties` are user patterns too (tool schemas, a
test case's `argsSchema` and `schema`). jsonschema-rs decides whether a tool's value is
valid (its regex engine bounds backtracking), but the `jsonschema` package, which lists
the errors of a refused value and checks the schemas of test cases, calls `re.search`.
`jsonschema_uses_re2` gives that package RE2 for every pattern RE2 can compile, which is
also closer to the ECMA-262 dialect JSON Schema specifies (`$` only at the end, `\\d`
only ASCII digits). A pattern RE2 cannot compile is refused where a test case is saved
(`schema_pattern_errors`); in a tool's schema (an imported spec may carry lookaround) it
is matched by jsonschema-rs's engine, as for the value's validity, whose backtracking is
bounded: never by `re`.

Patterns the studio writes itself stay with `re`.
"""

from __future__ import annotations

from collections.abc import Iterator
from functools import lru_cache
from types import SimpleNamespace
from typing import Any

import jsonschema_rs
import re2

_OPTIONS = re2.Options()
_OPTIONS.log_errors = False  # a refused pattern is the user's error, not a log line


class PatternError(ValueError):
    """A pattern RE2 cannot compile; the message says why."""


def _reason(exc: Exception) -> str:
    reason = exc.args[0] if exc.args else str(exc)
    if isinstance(reason, bytes):
        reason = reason.decode("utf-8", "replace")
    return str(reason)


@lru_cache(maxsize=256)
def compile_pattern(pattern: str) -> Any:
    """The compiled pattern; PatternError when RE2 cannot compile it."""
    try:
        return re2.compile(pattern, options=_OPTIONS)
    except re2.error as exc:
        raise PatternError(_reason(exc)) from None


def pattern_problem(pattern: Any) -> str | None:
    """Save time: why `pattern` cannot be used, or None."""
    if not isinstance(pattern, str):
        return "must be a string"
    try:
        compile_pattern(pattern)
    except PatternError as exc:
        return (
            f"not a pattern this studio can match safely: {exc} (patterns are matched in "
            "linear time with RE2, which has no backreferences or lookaround)"
        )
    return None


def pattern_search(pattern: str, text: str) -> bool:
    """Does `pattern` match anywhere in `text` (as `re.search`)?"""
    return compile_pattern(pattern).search(text) is not None


@lru_cache(maxsize=256)
def _bounded_validator(pattern: str) -> Any:
    """jsonschema-rs's check of `pattern` alone (its engine bounds backtracking); None when
    that engine cannot compile it either."""
    try:
        return jsonschema_rs.validator_for({"pattern": pattern})
    except ValueError:
        return None


def _search_re2_first(pattern: str, text: str) -> Any:
    """`re.search` for the jsonschema package: RE2 when it compiles the pattern, else
    jsonschema-rs's bounded engine (a truthy value for a match, None otherwise)."""
    try:
        compiled = compile_pattern(pattern)
    except PatternError:
        validator = _bounded_validator(pattern)
        return True if validator is not None and validator.is_valid(text) else None
    return compiled.search(text)


def jsonschema_uses_re2() -> None:
    """Give the jsonschema package's `pattern`, `patternProperties` and
    `additionalProperties` checks RE2 (their modules' only use of `re` is `re.search`;
    `format: regex` keeps compiling with `re`). Called once at start-up (tools_app)."""
    from jsonschema import _keywords, _legacy_keywords, _utils

    shim = SimpleNamespace(search=_search_re2_first)
    for module in (_keywords, _legacy_keywords, _utils):
        module.re = shim


def _patterns(schema: Any, path: str) -> Iterator[tuple[str, Any]]:
    """(JSON path, pattern) of every `pattern` and `patternProperties` key in a schema."""
    if isinstance(schema, list):
        for index, item in enumerate(schema):
            yield from _patterns(item, f"{path}[{index}]")
        return
    if not isinstance(schema, dict):
        return
    for key, value in schema.items():
        where = f"{path}.{key}"
        if key == "pattern" and isinstance(value, str):
            yield where, value
        elif key == "patternProperties" and isinstance(value, dict):
            for name, sub in value.items():
                yield f"{where}[{name!r}]", name
                yield from _patterns(sub, f"{where}[{name!r}]")
        elif key not in ("const", "enum", "default", "examples"):
            yield from _patterns(value, where)


def schema_pattern_errors(schema: Any, path: str) -> list[dict[str, str]]:
    """Save time: the patterns of a JSON Schema that RE2 cannot compile, each with its
    JSON path."""
    return [
        {"path": where, "message": problem}
        for where, pattern in _patterns(schema, path)
        if (problem := pattern_problem(pattern))
    ]
