"""An incremental parser for JSON that arrives in pieces (tool-call arguments).

`feed(delta)` consumes each character once and returns what the delta changed in the
parsed value as patches:

    {"op": "set", "path": [...], "value": v}        a value (container, scalar, string start)
    {"op": "append", "path": [...], "value": "t"}   text appended to the string at path

so the work per delta is proportional to the delta, never to what came before, and the
page applies the patches instead of re-parsing. Runs of string content are taken with one
regex match, not character by character.

`value()` is the partial value so far, with the conventions of jiter's
`partial_mode="trailing-strings"`: an unfinished string is included (without a half
escape), unfinished keys and literals are left out; an unfinished number shows as its
longest prefix that reads as a number ("12." as 12, where jiter leaves it out until it
reads as one). `finish()` checks that the text was one complete JSON value and returns it.
"""

from __future__ import annotations

import json
import re
from typing import Any

from django.conf import settings

_STRING_RUN = re.compile(r'[^"\\]+')
_SPACE = re.compile(r"[ \t\n\r]+")
_NUMBER_CHARS = re.compile(r"[0-9eE+\-.]+")
_LETTERS = re.compile(r"[a-z]+")
_COMPLETE_NUMBER = re.compile(r"-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?")
_ESCAPES = {'"': '"', "\\": "\\", "/": "/", "b": "\b", "f": "\f", "n": "\n", "r": "\r", "t": "\t"}
_LITERALS = {"true": True, "false": False, "null": None}

# What the parser expects next outside strings.
_VALUE, _KEY_OR_END, _KEY, _COLON, _COMMA_OR_END, _VALUE_OR_END, _DONE = range(7)
# What a string being read is.
_AS_KEY, _AS_VALUE = 0, 1


class PartialJSONError(ValueError):
    """The text is not (the beginning of) JSON."""

    def __init__(self, message: str, position: int) -> None:
        super().__init__(f"{message} at character {position}")
        self.position = position


class _Frame:
    __slots__ = ("container", "path", "key", "count")

    def __init__(self, container: dict | list, path: list) -> None:
        self.container = container
        self.path = path
        self.key: str | None = None
        self.count = 0


class IncrementalJSONParser:
    def __init__(self) -> None:
        self.stack: list[_Frame] = []
        self.root: Any = None
        self.has_root = False
        self.expect = _VALUE
        self.position = 0
        self.patches: list[dict[str, Any]] = []
        # The token being read across deltas.
        self.string: list[str] | None = None
        self.string_as = _AS_VALUE
        self.string_path: list | None = None
        self.escape = ""  # "" or the escape read so far ("\\", "\\u12", ...)
        self.high_surrogate = ""
        self.scalar = ""  # an unfinished number or literal
        self.scalar_is_number = False
        self.scalar_path: list | None = None
        self.scalar_emitted = ""

    # --- the public surface --------------------------------------------------------------
    def feed(self, delta: str) -> list[dict[str, Any]]:
        self.patches = []
        index, end = 0, len(delta)
        while index < end:
            string = self.string
            if string is not None:
                index = self._read_string(string, delta, index, end)
            elif self.scalar:
                index = self._read_scalar(delta, index, end)
            else:
                index = self._read_structure(delta, index, end)
        if self.scalar and self.scalar_is_number:
            self._emit_partial_number()
        self.position += end
        return self.patches

    def value(self) -> Any:
        """The partial value so far (the live object: copy it before keeping it)."""
        if self.string is not None and self.string_as == _AS_VALUE:
            joined = "".join(self.string)
            self.string[:] = [joined] if joined else []
            self._place(self.string_path, joined)
        if self.scalar and self.scalar_is_number:
            number = self._partial_number(self.scalar)
            if number is not None:
                self._place(self.scalar_path, number)
        return self.root if self.has_root else None

    @property
    def complete(self) -> bool:
        return self.expect == _DONE and self.string is None and not self.scalar

    def finish(self) -> Any:
        """The complete value; raises PartialJSONError when the text was not one JSON value."""
        if self.scalar and not self.stack:
            # A bare number at the root ends with the text.
            self._end_scalar()
        if not self.complete:
            raise PartialJSONError("unexpected end of JSON", self.position)
        return self.root

    # --- tokens ----------------------------------------------------------------------------
    def _read_string(self, string: list[str], delta: str, index: int, end: int) -> int:
        """Reads on in the string being read (`string`, its parts so far)."""
        if self.escape:
            return self._read_escape(delta, index, end)
        match = _STRING_RUN.match(delta, index)
        if match is not None:
            if self.high_surrogate:
                self._flush_surrogate()
            # The hot path (most of an argument is string content), inlined.
            text = match.group()
            string.append(text)
            if self.string_as == _AS_VALUE:
                patches = self.patches
                if patches and patches[-1]["path"] is self.string_path:
                    patches[-1]["value"] += text
                else:
                    patches.append({"op": "append", "path": self.string_path, "value": text})
            index = match.end()
            if index >= end:
                return index
        if delta[index] == '"':
            if self.high_surrogate:
                self._flush_surrogate()
            self._end_string()
            return index + 1
        self.escape = "\\"
        return index + 1

    def _read_escape(self, delta: str, index: int, end: int) -> int:
        while index < end:
            self.escape += delta[index]
            index += 1
            escape = self.escape
            if len(escape) == 2:
                if escape[1] == "u":
                    continue
                if escape[1] not in _ESCAPES:
                    raise PartialJSONError(f"invalid escape {escape!r}", self.position + index)
                self.escape = ""
                self._flush_surrogate()
                self._string_text(_ESCAPES[escape[1]])
                return index
            if len(escape) == 6:
                try:
                    code = int(escape[2:], 16)
                except ValueError:
                    raise PartialJSONError(
                        f"invalid escape {escape!r}", self.position + index
                    ) from None
                self.escape = ""
                self._codepoint(code)
                return index
        return index

    def _codepoint(self, code: int) -> None:
        # A surrogate pair is one character: hold the high half until the low one arrives.
        if 0xDC00 <= code <= 0xDFFF and self.high_surrogate:
            high, self.high_surrogate = ord(self.high_surrogate), ""
            self._string_text(chr(0x10000 + ((high - 0xD800) << 10) + (code - 0xDC00)))
            return
        self._flush_surrogate()
        if 0xD800 <= code <= 0xDBFF:
            self.high_surrogate = chr(code)
        else:
            self._string_text(chr(code))

    def _flush_surrogate(self) -> None:
        # A high surrogate not followed by a low one stays a lone surrogate (as json does).
        if self.high_surrogate:
            pending, self.high_surrogate = self.high_surrogate, ""
            self._string_text(pending)

    def _string_text(self, text: str) -> None:
        # Only while a string is read (an escape or a surrogate inside one).
        assert self.string is not None
        self.string.append(text)
        if self.string_as == _AS_VALUE:
            self._append(self.string_path, text)

    def _end_string(self) -> None:
        assert self.string is not None  # called at the closing quote of a string
        text = "".join(self.string)
        self.string = None
        if self.string_as == _AS_KEY:
            self.stack[-1].key = text
            self.expect = _COLON
            return
        self._place(self.string_path, text)
        self._after_value()

    def _read_scalar(self, delta: str, index: int, end: int) -> int:
        pattern = _NUMBER_CHARS if self.scalar_is_number else _LETTERS
        match = pattern.match(delta, index)
        if match is not None:
            self.scalar += match.group()
            index = match.end()
            if not self.scalar_is_number and self.scalar in _LITERALS:
                self._end_scalar()
                return index
            if not self.scalar_is_number and len(self.scalar) >= 5:
                raise PartialJSONError(f"invalid literal {self.scalar!r}", self.position + index)
            if index >= end:
                return index
        self._end_scalar()
        return index

    def _end_scalar(self) -> None:
        text, self.scalar = self.scalar, ""
        if self.scalar_is_number:
            number = self._number_or_none(text)
            if number is None:
                raise PartialJSONError(f"invalid number {text!r}", self.position)
            self._place(self.scalar_path, number)
            if repr(number) != self.scalar_emitted:
                self._set(self.scalar_path, number)
            self.scalar_emitted = ""
        else:
            if text not in _LITERALS:
                raise PartialJSONError(f"invalid literal {text!r}", self.position)
            self._place(self.scalar_path, _LITERALS[text])
            self._set(self.scalar_path, _LITERALS[text])
        self._after_value()

    @staticmethod
    def _number_or_none(text: str) -> int | float | None:
        return json.loads(text) if _COMPLETE_NUMBER.fullmatch(text) else None

    @staticmethod
    def _partial_number(text: str) -> int | float | None:
        # "12." or "1e" show as 12 and 1 (the longest prefix that reads as a number), so
        # a number never flickers in and out while it streams.
        match = _COMPLETE_NUMBER.match(text)
        return json.loads(match.group()) if match else None

    def _emit_partial_number(self) -> None:
        number = self._partial_number(self.scalar)
        if number is not None:
            shown = repr(number)
            if shown != self.scalar_emitted:
                self.scalar_emitted = shown
                self._set(self.scalar_path, number)

    # --- structure ---------------------------------------------------------------------------
    def _read_structure(self, delta: str, index: int, end: int) -> int:
        char = delta[index]
        if char in " \t\n\r":
            space = _SPACE.match(delta, index)
            index = space.end() if space is not None else index + 1
            if index >= end:
                return index
            char = delta[index]
        expect = self.expect
        if expect == _VALUE or expect == _VALUE_OR_END:
            if char == "]" and expect == _VALUE_OR_END:
                self._close(list)
            else:
                self._start_value(char, index)
            return index + 1
        if expect == _KEY_OR_END or expect == _KEY:
            if char == '"':
                self.string, self.string_as, self.string_path = [], _AS_KEY, None
            elif char == "}" and expect == _KEY_OR_END:
                self._close(dict)
            else:
                raise PartialJSONError(f"expected a key, got {char!r}", self.position + index)
            return index + 1
        if expect == _COLON:
            if char != ":":
                raise PartialJSONError(f"expected ':', got {char!r}", self.position + index)
            self.expect = _VALUE
            return index + 1
        if expect == _COMMA_OR_END:
            frame = self.stack[-1]
            is_dict = isinstance(frame.container, dict)
            if char == ",":
                self.expect = _KEY if is_dict else _VALUE
            elif char == ("}" if is_dict else "]"):
                self._close(dict if is_dict else list)
            else:
                raise PartialJSONError(
                    f"expected ',' or a closing bracket, got {char!r}", self.position + index
                )
            return index + 1
        raise PartialJSONError(f"unexpected {char!r} after the value", self.position + index)

    def _child_path(self) -> list:
        if not self.stack:
            return []
        frame = self.stack[-1]
        if isinstance(frame.container, dict):
            return [*frame.path, frame.key]
        return [*frame.path, frame.count]

    def _start_value(self, char: str, index: int) -> None:
        path = self._child_path()
        if char == "{" or char == "[":
            if len(self.stack) >= settings.STUDIO_MAX_JSON_DEPTH:  # stored and sent as JSON
                raise PartialJSONError("nested too deeply", self.position + index)
            container: dict | list = {} if char == "{" else []
            self._set(path, {} if char == "{" else [])
            self._attach(path, container)
            self.stack.append(_Frame(container, path))
            self.expect = _KEY_OR_END if char == "{" else _VALUE_OR_END
        elif char == '"':
            self.string, self.string_as, self.string_path = [], _AS_VALUE, path
            self._set(path, "")
            self._attach(path, "")
        elif char == "-" or "0" <= char <= "9":
            self.scalar, self.scalar_is_number, self.scalar_path = char, True, path
            self.scalar_emitted = ""
        elif char in "tfn":
            self.scalar, self.scalar_is_number, self.scalar_path = char, False, path
        else:
            raise PartialJSONError(f"unexpected {char!r}", self.position + index)

    def _attach(self, path: list, value: Any) -> None:
        """Put a new value into the tree (for value()); patches were emitted separately."""
        if not self.stack:
            self.root, self.has_root = value, True
            return
        frame = self.stack[-1]
        if isinstance(frame.container, dict):
            frame.container[frame.key] = value
        else:
            frame.container.append(value)

    def _place(self, path: list | None, value: Any) -> None:
        """Replace the value at the current child position (strings and numbers grow)."""
        if path is None:
            return
        if not self.stack:
            self.root, self.has_root = value, True
            return
        frame = self.stack[-1]
        if isinstance(frame.container, dict):
            frame.container[frame.key] = value
        elif frame.count < len(frame.container):
            frame.container[frame.count] = value
        else:
            frame.container.append(value)

    def _after_value(self) -> None:
        if not self.stack:
            self.expect = _DONE
            return
        frame = self.stack[-1]
        frame.count += 1
        self.expect = _COMMA_OR_END

    def _close(self, kind: type) -> None:  # noqa: ARG002 - reads better at call sites
        self.stack.pop()
        self._after_value()

    # --- patches -----------------------------------------------------------------------------
    def _set(self, path: list | None, value: Any) -> None:
        self.patches.append({"op": "set", "path": path, "value": value})

    def _append(self, path: list | None, text: str) -> None:
        patches = self.patches
        if patches:
            last = patches[-1]
            if last["path"] is path:
                # One delta: "set ''" then text, or two appends, become one patch.
                last["value"] += text
                return
        patches.append({"op": "append", "path": path, "value": text})


def parse_partial(text: str) -> Any:
    """The partial value of a whole text at once (late joiners, tests)."""
    parser = IncrementalJSONParser()
    parser.feed(text)
    return parser.value()
