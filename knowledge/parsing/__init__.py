"""From the bytes of a document to its blocks: text with the heading path above it, the
page it is on and whether it is a table. Parsing is done by well-kept libraries (pypdf,
python-docx, trafilatura, markdown-it-py, the csv and json modules); knowledge.parsing.
chunking cuts the blocks into chunks.

`sniff` decides the format from the content itself (magic bytes, a docx's parts, whether
the text parses as JSON), using the file name and the declared type only to choose among
text formats: a file named .pdf that is not a PDF is refused, not guessed at.
"""

from __future__ import annotations

import json

from knowledge.parsing import formats
from knowledge.parsing.base import Block, Parsed, ParseError, UnsupportedFormat, decode_text
from knowledge.parsing.limits import Limits, TextBudget, TooLarge, json_check, zip_open

__all__ = [
    "Block",
    "Limits",
    "Parsed",
    "ParseError",
    "TooLarge",
    "UnsupportedFormat",
    "parse",
    "sniff",
]

FORMATS = ("pdf", "docx", "html", "markdown", "text", "csv", "json")
_TEXT_EXTENSIONS = {
    "md": "markdown",
    "markdown": "markdown",
    "mdx": "markdown",
    "htm": "html",
    "html": "html",
    "xhtml": "html",
    "csv": "csv",
    "json": "json",
    "txt": "text",
    "text": "text",
    "log": "text",
    "rst": "text",
}
_TEXT_TYPES = {
    "text/markdown": "markdown",
    "text/x-markdown": "markdown",
    "text/html": "html",
    "application/xhtml+xml": "html",
    "text/csv": "csv",
    "application/json": "json",
    "text/plain": "text",
}


def _extension(filename: str) -> str:
    return filename.rsplit(".", 1)[-1].lower() if "." in filename else ""


def sniff(
    content: bytes, *, filename: str = "", content_type: str = "", limits: Limits | None = None
) -> str:
    """The document's format, one of FORMATS; raises UnsupportedFormat, or TooLarge for
    an archive or JSON whose declared sizes, parts or nesting are over the limits (seen
    without unzipping or parsing anything)."""
    limits = limits or Limits.from_settings()
    ext = _extension(filename)
    declared = content_type.split(";")[0].strip().lower()
    if content.startswith(b"%PDF-"):
        return "pdf"
    if content.startswith(b"PK\x03\x04"):
        try:
            names = set(zip_open(content, limits).namelist())
        except TooLarge:
            raise
        except ParseError as exc:
            raise UnsupportedFormat(str(exc)) from None
        if "word/document.xml" in names:
            return "docx"
        raise UnsupportedFormat("ZIP archives other than DOCX documents are not supported.")
    if ext == "pdf" or declared == "application/pdf":
        raise UnsupportedFormat("The file is named or typed as a PDF but is not one.")
    if ext == "docx":
        raise UnsupportedFormat("The file is named .docx but is not a Word document.")
    if b"\x00" in content[:8192]:
        raise UnsupportedFormat(
            "Binary files are not supported (PDF, DOCX, HTML, Markdown, text, CSV, JSON)."
        )
    text = decode_text(content)
    guess = _TEXT_EXTENSIONS.get(ext) or _TEXT_TYPES.get(declared)
    head = text.lstrip()[:512].lower()
    if guess is None:
        if head.startswith(("<!doctype html", "<html")) or "<body" in head:
            guess = "html"
        elif head.startswith(("{", "[")):
            guess = "json"
        else:
            guess = "text"
    if guess == "json":
        json_check(text, limits)
        try:
            json.loads(text)
        except ValueError as exc:
            raise ParseError(f"The file is not valid JSON: {exc}") from None
    return guess


def parse(content: bytes, *, format: str, limits: Limits | None = None) -> Parsed:  # noqa: A002
    """The document's blocks, within `limits` (default: the settings'); raises ParseError
    (TooLarge for a limit)."""
    limits = limits or Limits.from_settings()
    parser = {
        "pdf": formats.parse_pdf,
        "docx": formats.parse_docx,
        "html": formats.parse_html,
        "markdown": formats.parse_markdown_bytes,
        "text": formats.parse_text,
        "csv": formats.parse_csv,
        "json": formats.parse_json,
    }.get(format)
    if parser is None:
        raise UnsupportedFormat(f"Unknown format {format!r}.")
    parsed = parser(content, limits, TextBudget(limits))
    if not any(block.text.strip() for block in parsed.blocks):
        raise ParseError("The document has no text to index (a scanned PDF needs OCR first).")
    return parsed
