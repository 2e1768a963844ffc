"""Regular expressions that users write, matched in time linear in the text.

Python's `re` backtracks: a pattern such as `(a+)+$` takes seconds of CPU per match at
two dozen characters, and doubles with each one more, so one pattern in a test case can
hold a worker for ever. Every pattern a user gives is compiled and matched here with RE2
(`google-re2`), which never backtracks: its cost grows with the length of the text, not
exponentially. RE2 has no backreferences (`\\1`) and no lookaround (`(?=`, `(?<!`); a
pattern that uses them is refused where it is saved, with the reason.

Patterns the studio writes itself stay with `re`.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any

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
