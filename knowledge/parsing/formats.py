"""One parser per format; each returns the document's blocks in reading order."""

from __future__ import annotations

import csv
import io
import json
import re
from typing import Any

import docx
import trafilatura
from docx.table import Table
from docx.text.paragraph import Paragraph
from lxml import html as lxml_html
from markdown_it import MarkdownIt
from pypdf import PdfReader, apply_configuration
from pypdf.errors import LimitReachedError, PdfReadError

from knowledge.parsing.base import Block, Parsed, ParseError, decode_text
from knowledge.parsing.limits import (
    Limits,
    TextBudget,
    json_check,
    too_large,
    zip_open,
    zip_read_all,
)

_HEADING_STYLE = re.compile(r"^(?:heading|überschrift|titre)\s*(\d)$", re.IGNORECASE)
_TABLE_LINE = re.compile(r"^\s*\|")
CSV_MAX_ROWS = 200_000
_HTML_PIECE = 1 << 16


# --- PDF ---------------------------------------------------------------------------------
def parse_pdf(content: bytes, limits: Limits, budget: TextBudget) -> Parsed:
    # Every compressed stream of the PDF may expand to max_unzipped_bytes at most.
    most = limits.max_unzipped_bytes
    try:
        with apply_configuration(
            maximum_declared_stream_length=most,
            array_based_stream_maximum_output_length=most,
            zlib_maximum_output_length=most,
            lzw_maximum_output_length=most,
            run_length_maximum_output_length=most,
            brotli_maximum_output_length=most,
            jbig2_maximum_output_length=most,
        ):
            return _read_pdf(content, limits, budget)
    except LimitReachedError:
        raise too_large(
            f"a compressed stream of the PDF expands to more than {most:,} bytes",
            most,
            "MAX_UNZIPPED_BYTES",
        ) from None
    except (PdfReadError, ValueError, KeyError, TypeError) as exc:
        if isinstance(exc, ParseError):
            raise
        raise ParseError(f"The PDF could not be read: {exc}") from None


def _read_pdf(content: bytes, limits: Limits, budget: TextBudget) -> Parsed:
    reader = PdfReader(io.BytesIO(content))
    if reader.is_encrypted and not reader.decrypt(""):
        raise ParseError("The PDF is encrypted with a password.")
    count = len(reader.pages)
    if count > limits.max_pdf_pages:
        raise too_large(f"the PDF has {count:,} pages", limits.max_pdf_pages, "MAX_PDF_PAGES")
    outline = _pdf_outline(reader)
    blocks = []
    for number, page in enumerate(reader.pages, start=1):
        text = budget.take(page.extract_text() or "")
        if text.strip():
            blocks.append(Block(text=text, heading=outline.get(number, []), page=number))
    title = (reader.metadata.title if reader.metadata else None) or ""
    return Parsed(format="pdf", blocks=blocks, title=str(title), pages=count)


def _pdf_outline(reader: PdfReader) -> dict[int, list[str]]:
    """Page number -> the bookmark path in force on that page (from the PDF's outline)."""
    starts: list[tuple[int, list[str]]] = []

    def walk(items: list[Any], path: list[str]) -> None:
        last: list[str] = path
        for item in items:
            if isinstance(item, list):
                walk(item, last)
                continue
            try:
                page = reader.get_destination_page_number(item) + 1
            except (KeyError, ValueError, TypeError, AttributeError):
                continue
            last = [*path, str(item.title).strip()]
            starts.append((page, last))

    try:
        walk(reader.outline, [])
    except (PdfReadError, KeyError, ValueError, TypeError):
        return {}
    starts.sort(key=lambda s: s[0])
    in_force: dict[int, list[str]] = {}
    for number in range(1, len(reader.pages) + 1):
        current = [path for page, path in starts if page <= number]
        if current:
            in_force[number] = current[-1]
    return in_force


# --- DOCX --------------------------------------------------------------------------------
def parse_docx(content: bytes, limits: Limits, budget: TextBudget) -> Parsed:
    # The archive's declared sizes, then the bytes it really unzips to, before
    # python-docx reads (and holds) any part of it.
    zip_read_all(zip_open(content, limits), limits)
    try:
        document = docx.Document(io.BytesIO(content))
    except Exception as exc:  # noqa: BLE001 - python-docx raises many kinds on bad input
        raise ParseError(f"The Word document could not be read: {exc}") from None
    blocks: list[Block] = []
    path: list[tuple[int, str]] = []
    # A paragraph's style is looked up by id among all styles: once per id, not once per
    # paragraph (which made a document of 100,000 paragraphs take minutes).
    levels: dict[str | None, int] = {}
    for element in document.element.body.iterchildren():
        tag = element.tag.rsplit("}", 1)[-1]
        if tag == "p":
            paragraph = Paragraph(element, document)
            text = budget.take(paragraph.text).strip()
            if element.style not in levels:
                levels[element.style] = _docx_heading_level(paragraph)
            level = levels[element.style]
            if level and text:
                path = [entry for entry in path if entry[0] < level] + [(level, text)]
            elif text:
                blocks.append(Block(text=text, heading=[t for _, t in path]))
        elif tag == "tbl":
            rows = _docx_rows(Table(element, document))
            if rows:
                text = budget.take(markdown_table(rows))
                blocks.append(Block(text=text, heading=[t for _, t in path], table=True))
    title = document.core_properties.title or (path[0][1] if path else "")
    return Parsed(format="docx", blocks=blocks, title=title)


def _docx_heading_level(paragraph: Paragraph) -> int:
    name = (paragraph.style.name if paragraph.style is not None else "") or ""
    if name.lower() == "title":
        return 1
    match = _HEADING_STYLE.match(name.strip())
    return int(match.group(1)) if match else 0


def _docx_rows(table: Table) -> list[list[str]]:
    rows = []
    for row in table.rows:
        cells = [cell.text.strip() for cell in row.cells]
        if any(cells):
            rows.append(cells)
    return rows


def markdown_table(rows: list[list[str]]) -> str:
    """Rows as a Markdown table (the first row is the header): readable as text, and
    the chunker can repeat the header in every chunk of a long table."""
    width = max(len(row) for row in rows)

    def line(cells: list[str]) -> str:
        cells = [c.replace("|", "\\|").replace("\n", " ") for c in cells]
        return "| " + " | ".join(cells + [""] * (width - len(cells))) + " |"

    return "\n".join([line(rows[0]), "|" + "---|" * width, *(line(r) for r in rows[1:])])


# --- HTML --------------------------------------------------------------------------------
def parse_html(content: bytes, limits: Limits, budget: TextBudget) -> Parsed:
    text = decode_text(content)
    _html_check(text, limits)
    markdown = trafilatura.extract(
        text,
        output_format="markdown",
        include_tables=True,
        include_formatting=True,
        include_links=False,
        include_images=False,
        favor_recall=True,
    )
    metadata = trafilatura.extract_metadata(text)
    title = (metadata.title if metadata else "") or ""
    if not markdown:
        # Pages too short or too unusual for the extractor: their visible text.
        try:
            tree = lxml_html.fromstring(text)
        except (ValueError, lxml_html.etree.ParserError):
            raise ParseError("The HTML page has no readable text.") from None
        for node in tree.xpath("//script|//style|//noscript"):
            node.drop_tree()
        markdown = "\n\n".join(
            line.strip() for line in tree.text_content().splitlines() if line.strip()
        )
        title = title or (tree.findtext(".//title") or "").strip()
    parsed = parse_markdown(budget.take(markdown))
    return Parsed(format="html", blocks=parsed.blocks, title=title or parsed.title)


def _html_check(text: str, limits: Limits) -> None:
    """Refuse a page of more elements than the limit, counted as lxml's parser makes
    them, before the extractor builds its own trees of the page."""
    parser = lxml_html.etree.HTMLPullParser(events=("start",))
    nodes = 0
    for start in range(0, len(text), _HTML_PIECE):
        parser.feed(text[start : start + _HTML_PIECE])
        nodes += sum(1 for _ in parser.read_events())
        if nodes > limits.max_html_nodes:
            raise too_large(
                f"the page has more than {limits.max_html_nodes:,} HTML elements",
                limits.max_html_nodes,
                "MAX_HTML_NODES",
            )
    parser.close()


# --- Markdown and text -------------------------------------------------------------------
_md = MarkdownIt("commonmark").enable("table")


def parse_markdown_bytes(content: bytes, limits: Limits, budget: TextBudget) -> Parsed:
    return parse_markdown(budget.take(decode_text(content)))


def parse_markdown(text: str) -> Parsed:
    lines = text.splitlines()
    tokens = _md.parse(text)
    headings = [
        (int(tok.tag[1]), tok.map[0], tok.map[1], tokens[i + 1].content.strip())
        for i, tok in enumerate(tokens)
        if tok.type == "heading_open" and tok.map
    ]
    blocks: list[Block] = []
    path: list[tuple[int, str]] = []
    position = 0
    for level, start, end, title in headings:
        blocks.extend(_section_blocks(lines[position:start], [t for _, t in path]))
        path = [entry for entry in path if entry[0] < level] + [(level, title)]
        position = end
    blocks.extend(_section_blocks(lines[position:], [t for _, t in path]))
    title = next((t for level, _, _, t in headings if level == 1), "")
    return Parsed(format="markdown", blocks=blocks, title=title)


def _section_blocks(lines: list[str], heading: list[str]) -> list[Block]:
    """A section's lines as text blocks and table blocks (runs of `|` lines)."""
    blocks: list[Block] = []
    run: list[str] = []
    in_table = False
    for line in [*lines, ""]:
        is_table = bool(_TABLE_LINE.match(line))
        if is_table != in_table and run:
            body = "\n".join(run).strip()
            if body:
                blocks.append(Block(text=body, heading=heading, table=in_table))
            run = []
        in_table = is_table
        run.append(line)
    body = "\n".join(run).strip()
    if body:
        blocks.append(Block(text=body, heading=heading, table=in_table))
    return blocks


def parse_text(content: bytes, limits: Limits, budget: TextBudget) -> Parsed:
    return Parsed(format="text", blocks=[Block(text=budget.take(decode_text(content)))])


# --- CSV and JSON ------------------------------------------------------------------------
def parse_csv(content: bytes, limits: Limits, budget: TextBudget) -> Parsed:
    text = budget.take(decode_text(content))
    try:
        dialect = csv.Sniffer().sniff(text[:8192], delimiters=",;\t|")
    except csv.Error:
        dialect = csv.excel
    try:
        rows = []
        for index, row in enumerate(csv.reader(io.StringIO(text), dialect)):
            if index >= CSV_MAX_ROWS:
                raise ParseError(f"The CSV file has more than {CSV_MAX_ROWS} rows.")
            if any(cell.strip() for cell in row):
                rows.append([cell.strip() for cell in row])
    except csv.Error as exc:
        raise ParseError(f"The CSV file could not be read: {exc}") from None
    if not rows:
        raise ParseError("The CSV file has no rows.")
    return Parsed(format="csv", blocks=[Block(text=markdown_table(rows), table=True)])


def parse_json(content: bytes, limits: Limits, budget: TextBudget) -> Parsed:
    text = decode_text(content)
    json_check(text, limits)
    try:
        value = json.loads(text)
    except ValueError as exc:
        raise ParseError(f"The file is not valid JSON: {exc}") from None
    blocks: list[Block] = []
    if isinstance(value, list):
        for index, item in enumerate(value):
            blocks.append(Block(text=budget.take(_json_lines(item)), heading=[f"$[{index}]"]))
    elif isinstance(value, dict):
        for key, item in value.items():
            blocks.append(Block(text=budget.take(_json_lines(item, key)), heading=[f"$.{key}"]))
    else:
        blocks.append(Block(text=budget.take(json.dumps(value, ensure_ascii=False))))
    return Parsed(format="json", blocks=blocks)


def _json_lines(value: Any, prefix: str = "") -> str:
    """A JSON value as `path: value` lines, readable and searchable."""
    lines: list[str] = []

    def walk(item: Any, path: str) -> None:
        if isinstance(item, dict):
            for key, child in item.items():
                walk(child, f"{path}.{key}" if path else str(key))
        elif isinstance(item, list) and any(isinstance(c, dict | list) for c in item):
            for index, child in enumerate(item):
                walk(child, f"{path}[{index}]")
        else:
            text = item if isinstance(item, str) else json.dumps(item, ensure_ascii=False)
            lines.append(f"{path}: {text}" if path else text)

    walk(value, prefix)
    return "\n".join(lines)
