"""What one document may produce when it is read, and the checks that hold a parser to it.

A 100 KB upload can expand to gigabytes: a DOCX is a ZIP archive, PDF streams are
compressed, an HTML page or a JSON file of a few megabytes can become millions of nodes.
So every parser is bounded by what it produces, not only by the bytes it reads:

- archives (DOCX): how many parts, how many bytes they unzip to (their declared sizes
  first, then the bytes actually read), how much one part may expand;
- PDF: pages, and each compressed stream's output (pypdf's own limits, set to ours);
- HTML: elements; JSON: nesting depth and values;
- every format: the characters of text extracted, and the chunks cut from them.

A refusal is a `TooLarge` whose message names the limit and the setting that raises it;
it becomes the document's failed status. The parse itself runs in a child process whose
memory and time are limited too (knowledge.parsing.isolated), for what no count foresees.
"""

from __future__ import annotations

import io
import struct
import zipfile
from dataclasses import dataclass, fields

from knowledge.parsing.base import ParseError

_READ_PIECE = 1 << 16
# Parts smaller than this are not held to the expansion ratio: small XML parts of
# repeated markup compress well without being bombs.
RATIO_GRACE_BYTES = 1_000_000


class TooLarge(ParseError):
    """The document produces more than a limit allows; the message names the limit."""


@dataclass(frozen=True)
class Limits:
    """The limits of one document (defaults as in studio/settings/tools.py)."""

    max_text_chars: int = 5_000_000
    max_chunks: int = 10_000
    max_unzipped_bytes: int = 100_000_000
    max_zip_parts: int = 2_000
    max_zip_ratio: int = 100
    max_pdf_pages: int = 2_000
    max_html_nodes: int = 300_000
    max_json_depth: int = 64
    max_json_values: int = 1_000_000

    @classmethod
    def from_settings(cls) -> Limits:
        from django.conf import settings

        return cls(
            **{f.name: getattr(settings, f"STUDIO_KNOWLEDGE_{f.name.upper()}") for f in fields(cls)}
        )


def too_large(what: str, limit: int, setting: str) -> TooLarge:
    return TooLarge(
        f"The document is too large to index: {what} (the limit is {limit:,}, "
        f"STUDIO_KNOWLEDGE_{setting})."
    )


class TextBudget:
    """Counts the characters a parser extracts and refuses the document as soon as they
    pass the limit, before the rest is read."""

    def __init__(self, limits: Limits) -> None:
        self.limit = limits.max_text_chars
        self.used = 0

    def take(self, text: str) -> str:
        self.used += len(text)
        if self.used > self.limit:
            raise too_large(
                f"it holds more than {self.limit:,} characters of text",
                self.limit,
                "MAX_TEXT_CHARS",
            )
        return text


# --- ZIP archives ------------------------------------------------------------------------
def zip_entry_count(content: bytes) -> int | None:
    """The entry count the archive's end record declares, read before any directory
    entry is (a directory of a million entries is itself a bomb); None if not found."""
    tail = content[-(65_535 + 22) :]
    at = tail.rfind(b"PK\x05\x06")
    if at < 0 or len(tail) - at < 22:
        return None
    count = struct.unpack("<H", tail[at + 10 : at + 12])[0]
    if count == 0xFFFF:  # ZIP64: the real count is in the ZIP64 end record
        z64 = tail.rfind(b"PK\x06\x06", 0, at)
        if z64 >= 0 and at - z64 >= 56:
            count = struct.unpack("<Q", tail[z64 + 32 : z64 + 40])[0]
    return count


def zip_open(content: bytes, limits: Limits) -> zipfile.ZipFile:
    """The archive, after its declared sizes pass the limits: part count, unzipped
    total, and the expansion ratio of each large part. Raises TooLarge or ParseError."""
    declared = zip_entry_count(content)
    if declared is not None and declared > limits.max_zip_parts:
        raise _too_many_parts(declared, limits)
    try:
        archive = zipfile.ZipFile(io.BytesIO(content))
    except (zipfile.BadZipFile, zipfile.LargeZipFile, ValueError, struct.error):
        raise ParseError("The file looks like a ZIP archive but is damaged.") from None
    members = archive.infolist()
    if len(members) > limits.max_zip_parts:
        raise _too_many_parts(len(members), limits)
    total = sum(member.file_size for member in members)
    if total > limits.max_unzipped_bytes:
        raise _unzips_to(f"{total:,} bytes", limits)
    for member in members:
        if member.file_size > RATIO_GRACE_BYTES and member.file_size > limits.max_zip_ratio * max(
            member.compress_size, 1
        ):
            ratio = member.file_size // max(member.compress_size, 1)
            raise too_large(
                f"its part {member.filename} expands {ratio:,} times when unzipped "
                f"({member.compress_size:,} to {member.file_size:,} bytes)",
                limits.max_zip_ratio,
                "MAX_ZIP_RATIO",
            )
    return archive


def zip_read_all(archive: zipfile.ZipFile, limits: Limits) -> None:
    """Unzip every part once without keeping it, counting the bytes that come out: a
    declared size can lie. zipfile also stops each part at its declared size and checks
    its CRC, so a part that holds more than it declares is refused as damaged."""
    produced = 0
    for member in archive.infolist():
        try:
            with archive.open(member) as part:
                while piece := part.read(_READ_PIECE):
                    produced += len(piece)
                    if produced > limits.max_unzipped_bytes:
                        raise _unzips_to(f"more than {limits.max_unzipped_bytes:,} bytes", limits)
        except (zipfile.BadZipFile, EOFError, OSError, ValueError, NotImplementedError) as exc:
            raise ParseError(f"The file looks like a ZIP archive but is damaged: {exc}") from None


def _too_many_parts(count: int, limits: Limits) -> TooLarge:
    return too_large(f"the archive has {count:,} parts", limits.max_zip_parts, "MAX_ZIP_PARTS")


def _unzips_to(size: str, limits: Limits) -> TooLarge:
    return too_large(f"it unzips to {size}", limits.max_unzipped_bytes, "MAX_UNZIPPED_BYTES")


# --- JSON --------------------------------------------------------------------------------
def json_check(text: str, limits: Limits) -> None:
    """Refuse JSON nested deeper or holding more values than the limits allow, by a scan
    of its punctuation before any parser builds (or recurses into) the values."""
    from common.json_input import JSONInputError, check_nesting, outside_strings

    try:
        check_nesting(text, limits.max_json_depth)
    except JSONInputError as exc:
        raise too_large(
            f"{exc.message.rstrip('.')}", limits.max_json_depth, "MAX_JSON_DEPTH"
        ) from None
    outside = outside_strings(text)
    values = outside.count(",") + outside.count("[") + outside.count("{") + 1
    if values > limits.max_json_values:
        raise too_large(
            f"the JSON holds about {values:,} values",
            limits.max_json_values,
            "MAX_JSON_VALUES",
        )
