"""JSON from outside the studio: the limits every request body, websocket frame and JSON
form field is held to, and the one cleaning of values PostgreSQL cannot store.

`json_loads` parses untrusted text without ever recursing into it: nesting deeper than
`settings.STUDIO_MAX_JSON_DEPTH` is found by a scan of the brackets before the parser
sees the text, so a document nested 100,000 deep is a 400, not a RecursionError. It also
refuses U+0000 in any string or key (PostgreSQL's text and jsonb cannot hold it), strings
longer than `settings.STUDIO_MAX_STRING_CHARS`, numbers beyond a double's range, and
invalid UTF-8; every refusal names the JSON path of the first offence.

A NUL that a tool or a model produces is not refused but stored as U+FFFD: `replace_nul`.
"""

from __future__ import annotations

import json
import re
from collections.abc import Collection, Iterable
from itertools import accumulate
from typing import Any

from django.conf import settings

from common.exceptions import ApplicationError

NUL = "\x00"
REPLACEMENT = "\ufffd"

_IDENTIFIER = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
# A JSON string piece (escapes included), written so that the regex engine does not
# backtrack over long strings.
_STRING = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"', re.DOTALL)
_PIECE = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"|[\[\]{},:]', re.DOTALL)
_BRACKET = re.compile(r"[\[\]{}]")
_DEPTH_STEP = {"[": 1, "{": 1, "]": -1, "}": -1}


class JSONInputError(ApplicationError):
    """Bad JSON input: a 400 (413 for a body over the size limit) in the studio's error
    shape, `{"detail", "code", "errors": [{"path", "message", ...}]}`."""

    def __init__(
        self,
        message: str,
        *,
        code: str,
        path: str = "$",
        status_code: int | None = None,
        **where: Any,
    ) -> None:
        super().__init__(
            message,
            code=code,
            status_code=status_code,
            extra={"errors": [{"path": path, "message": message, **where}]},
        )


def json_path(parts: Iterable[Any]) -> str:
    """`$.items[2].name` from the keys and indexes leading to a value."""
    path = "$"
    for part in parts:
        if isinstance(part, int):
            path += f"[{part}]"
        elif _IDENTIFIER.match(str(part)):
            path += f".{part}"
        else:
            path += "[" + json.dumps(str(part)) + "]"
    return path


# --- parsing ------------------------------------------------------------------------------
class _OutOfRange:
    """A number the parser read that no double can hold; reported with its path."""

    __slots__ = ("text",)

    def __init__(self, text: str) -> None:
        self.text = text


class _Numbers:
    """The parser's number hooks: a number out of a double's range becomes an _OutOfRange
    (reported with its path after parsing) instead of failing the whole parse."""

    def __init__(self) -> None:
        self.out_of_range = False

    def parse_int(self, text: str) -> Any:
        try:
            value = int(text)
            float(value)
        except (ValueError, OverflowError):  # over Python's digit limit, or beyond 1.8e308
            self.out_of_range = True
            return _OutOfRange(text)
        return value

    def parse_float(self, text: str) -> Any:
        value = float(text)
        if value in (float("inf"), float("-inf")):
            self.out_of_range = True
            return _OutOfRange(text)
        return value


def _refuse_constant(name: str) -> Any:
    raise ValueError(f"{name} is not a JSON number")


def json_loads(
    data: str | bytes,
    *,
    encoding: str = "utf-8",
    max_depth: int | None = None,
    max_string_chars: int | None = None,
    long_fields: Collection[str] = (),
    require_object: bool = False,
) -> Any:
    """Parse untrusted JSON text under the studio's limits; raise JSONInputError.

    `max_string_chars` defaults to settings.STUDIO_MAX_STRING_CHARS (0: no limit); the
    strings of the top-level keys in `long_fields` (whole documents as text) have none."""
    max_depth = settings.STUDIO_MAX_JSON_DEPTH if max_depth is None else max_depth
    if max_string_chars is None:
        max_string_chars = settings.STUDIO_MAX_STRING_CHARS
    text = _decode(data, encoding) if isinstance(data, bytes) else data
    check_nesting(text, max_depth)
    numbers = _Numbers()
    try:
        value = json.loads(
            text,
            parse_int=numbers.parse_int,
            parse_float=numbers.parse_float,
            parse_constant=_refuse_constant,
        )
    except json.JSONDecodeError as exc:
        raise JSONInputError(
            f"Invalid JSON at line {exc.lineno}, column {exc.colno}: {exc.msg}",
            code="invalid_json",
            line=exc.lineno,
            column=exc.colno,
        ) from None
    except ValueError as exc:  # NaN / Infinity
        raise JSONInputError(f"Invalid JSON: {exc}.", code="invalid_json") from None
    except RecursionError:  # the scan above makes this unreachable; kept as a backstop
        raise _too_deep("$", max_depth) from None
    if require_object and not isinstance(value, dict):
        raise JSONInputError(
            f"Send a JSON object ({{...}}), not {_kind(value)}.", code="not_an_object"
        )
    # Only a text that may hold a problem is walked: an escaped NUL, a string that may
    # be over the limit, a number out of range.
    long_strings = bool(max_string_chars) and len(text) > max_string_chars
    if "\\u0000" in text or long_strings or numbers.out_of_range:
        problem = value_problem(
            value,
            max_depth=max_depth,
            max_string_chars=max_string_chars or None,
            long_fields=long_fields,
        )
        if problem is not None:
            raise problem
    return value


def _decode(data: bytes, encoding: str) -> str:
    try:
        return data.decode(encoding)
    except UnicodeDecodeError as exc:
        raise JSONInputError(
            f"The body is not valid {encoding}: byte {exc.start} ({data[exc.start]:#04x}) "
            "cannot be decoded.",
            code="invalid_encoding",
            byte=exc.start,
        ) from None
    except LookupError:
        raise JSONInputError(f"Unknown charset {encoding!r}.", code="invalid_encoding") from None


def _kind(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, list):
        return "an array"
    if isinstance(value, str):
        return "a string"
    return "a number"


def check_nesting(text: str, max_depth: int | None = None) -> None:
    """Refuse JSON text nested deeper than `max_depth` (settings.STUDIO_MAX_JSON_DEPTH)
    before any parser recurses into it: JSONInputError with the path."""
    max_depth = settings.STUDIO_MAX_JSON_DEPTH if max_depth is None else max_depth
    outside = outside_strings(text)
    if outside.count("[") + outside.count("{") <= max_depth:
        return
    brackets = _BRACKET.findall(outside)
    if max(accumulate(_DEPTH_STEP[b] for b in brackets), default=0) <= max_depth:
        return
    raise _too_deep(_deep_path(text, max_depth), max_depth)


def outside_strings(text: str) -> str:
    """JSON text without its strings: its punctuation, numbers and literals, to count."""
    return _STRING.sub("", text) if '"' in text else text


def _deep_path(text: str, max_depth: int) -> str:
    """The JSON path of the first container nested deeper than `max_depth`."""
    stack: list[list[Any]] = []  # per open container: [is_object, key or index, expecting key]
    for match in _PIECE.finditer(text):
        piece = match.group()
        if piece in "[{":
            if len(stack) == max_depth:
                return json_path(frame[1] for frame in stack)
            stack.append([piece == "{", 0 if piece == "[" else None, piece == "{"])
        elif piece in "]}":
            if stack:
                stack.pop()
        elif piece == ",":
            if stack and stack[-1][0]:
                stack[-1][2] = True
            elif stack:
                stack[-1][1] += 1
        elif piece != ":" and stack and stack[-1][0] and stack[-1][2]:
            try:
                stack[-1][1] = json.loads(piece)
            except ValueError:
                stack[-1][1] = piece[1:-1]
            stack[-1][2] = False
    return "$"


def _too_deep(path: str, max_depth: int) -> JSONInputError:
    return JSONInputError(
        f"{path}: nested more than {max_depth} levels deep.", code="too_deep", path=path
    )


# --- checking a parsed value --------------------------------------------------------------
def value_problem(
    value: Any,
    *,
    max_depth: int | None = None,
    max_string_chars: int | None = None,
    max_nodes: int | None = None,
    long_fields: Collection[str] = (),
) -> JSONInputError | None:
    """The first problem of an already parsed value (in document order), or None: nesting
    deeper than `max_depth`, a NUL in a string or key, a string longer than
    `max_string_chars` (None: no length limit), a number beyond a double's range, more
    than `max_nodes` values (None: no limit; for values that share parts, like YAML's).
    The strings of the top-level keys in `long_fields` have no length limit.

    Walks with its own stack, so a value nested deeper than Python's recursion limit is
    reported rather than crashing the walk."""
    max_depth = settings.STUDIO_MAX_JSON_DEPTH if max_depth is None else max_depth
    stack: list[tuple[Any, tuple[Any, ...], int]] = [(value, (), 0)]
    seen = 0
    while stack:
        item, parts, depth = stack.pop()
        seen += 1
        if max_nodes is not None and seen > max_nodes:
            return JSONInputError(
                f"The document holds more than {max_nodes} values.", code="too_many_values"
            )
        if isinstance(item, dict | list):
            if depth >= max_depth:
                return _too_deep(json_path(parts), max_depth)
            if isinstance(item, dict):
                children = []
                for key, child in item.items():
                    key_problem = _string_problem(key, (*parts, key), max_string_chars, key=True)
                    if key_problem is not None:
                        return key_problem
                    children.append((child, (*parts, key), depth + 1))
            else:
                children = [(child, (*parts, i), depth + 1) for i, child in enumerate(item)]
            stack.extend(reversed(children))
        elif isinstance(item, str):
            exempt = len(parts) == 1 and parts[0] in long_fields
            problem = _string_problem(item, parts, None if exempt else max_string_chars)
            if problem is not None:
                return problem
        elif isinstance(item, _OutOfRange) or (
            isinstance(item, float) and item in (float("inf"), float("-inf"))
        ):
            path = json_path(parts)
            return JSONInputError(
                f"{path}: the number is too large (beyond ±1.8e308).",
                code="number_out_of_range",
                path=path,
            )
    return None


def _string_problem(
    text: Any, parts: tuple[Any, ...], max_chars: int | None, *, key: bool = False
) -> JSONInputError | None:
    if not isinstance(text, str):
        return None
    what = "key" if key else "string"
    if NUL in text:
        path = json_path(parts)
        return JSONInputError(
            f"{path}: the {what} contains a NUL character (U+0000), which cannot be stored.",
            code="nul_character",
            path=path,
        )
    if max_chars is not None and len(text) > max_chars:
        path = json_path(parts)
        return JSONInputError(
            f"{path}: the {what} is {len(text)} characters long; the limit is {max_chars}.",
            code="string_too_long",
            path=path,
        )
    return None


# --- storing what tools and models produce ---------------------------------------------------
def replace_nul(value: Any) -> Any:
    """`value` with every NUL (U+0000) in its strings and keys replaced by U+FFFD: what
    PostgreSQL's text and jsonb can hold (tuples become lists, as in JSON)."""
    if isinstance(value, str):
        return value.replace(NUL, REPLACEMENT) if NUL in value else value
    if isinstance(value, dict):
        return {replace_nul(key): replace_nul(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [replace_nul(item) for item in value]
    return value


def has_nul(value: Any) -> bool:
    """Whether replace_nul would change `value` (the same walk, without copying)."""
    if isinstance(value, str):
        return NUL in value
    if isinstance(value, dict):
        return any(has_nul(key) or has_nul(item) for key, item in value.items())
    if isinstance(value, list | tuple):
        return any(has_nul(item) for item in value)
    return False
