"""What parsing produces, and its errors (shared by knowledge.parsing's modules)."""

from __future__ import annotations

from dataclasses import dataclass, field

from charset_normalizer import from_bytes


class ParseError(ValueError):
    """The document could not be read; the message says why, for its failed status."""

    # The peak resident memory of the process that read it (MB), when it was measured.
    peak_rss_mb: float | None = None


class UnsupportedFormat(ParseError):
    """The bytes are none of the formats the studio reads."""


@dataclass
class Block:
    text: str
    heading: list[str] = field(default_factory=list)
    page: int | None = None
    table: bool = False


@dataclass
class Parsed:
    format: str
    blocks: list[Block]
    title: str = ""
    pages: int | None = None


def decode_text(content: bytes) -> str:
    """The bytes as text: UTF-8 (with or without BOM), else the detected charset."""
    try:
        return content.decode("utf-8-sig")
    except UnicodeDecodeError:
        best = from_bytes(content).best()
        if best is None:
            raise UnsupportedFormat("The file is neither a PDF, a DOCX nor text.") from None
        return str(best)
