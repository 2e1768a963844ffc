"""Small documents of every format the knowledge base reads, made by the tests."""

from __future__ import annotations

import csv
import io
import json
import struct
import zipfile

import docx
from fpdf import FPDF


def make_pdf(pages: list[tuple[str, str]]) -> bytes:
    """One page per (section title, text); each title is also a PDF bookmark."""
    pdf = FPDF()
    pdf.set_font("helvetica", size=11)
    for title, text in pages:
        pdf.add_page()
        pdf.start_section(title)
        pdf.set_font("helvetica", style="B", size=14)
        pdf.multi_cell(0, 8, title, new_x="LMARGIN", new_y="NEXT")
        pdf.set_font("helvetica", size=11)
        pdf.multi_cell(0, 6, text, new_x="LMARGIN", new_y="NEXT")
    return bytes(pdf.output())


def make_docx(sections: list[tuple[str, str]], table: list[list[str]] | None = None) -> bytes:
    document = docx.Document()
    document.add_heading("Employee handbook", level=1)
    for title, text in sections:
        document.add_heading(title, level=2)
        document.add_paragraph(text)
    if table:
        grid = document.add_table(rows=len(table), cols=len(table[0]))
        for r, row in enumerate(table):
            for c, value in enumerate(row):
                grid.cell(r, c).text = value
    out = io.BytesIO()
    document.save(out)
    return out.getvalue()


def make_html(title: str, sections: list[tuple[str, str]], links: list[str] = ()) -> bytes:
    body = "".join(f"<h2>{h}</h2><p>{t}</p>" for h, t in sections)
    anchors = "".join(f'<a href="{href}">{href}</a> ' for href in links)
    return (
        f"<!doctype html><html><head><title>{title}</title></head><body>"
        f"<nav>{anchors}</nav><article><h1>{title}</h1>{body}</article></body></html>"
    ).encode()


def make_markdown(title: str, sections: list[tuple[str, str]]) -> bytes:
    parts = [f"# {title}\n"]
    for heading, text in sections:
        parts.append(f"## {heading}\n\n{text}\n")
    return "\n".join(parts).encode()


def make_csv(rows: list[list[str]]) -> bytes:
    out = io.StringIO()
    csv.writer(out).writerows(rows)
    return out.getvalue().encode()


def make_json(value: object) -> bytes:
    return json.dumps(value).encode()


def sample_files() -> dict[str, tuple[str, bytes, str]]:
    """format -> (file name, bytes, a word only that file contains)."""
    return {
        "pdf": (
            "manual.pdf",
            make_pdf(
                [
                    ("Installation", "Unpack the zephyrite router and plug it in."),
                    ("Troubleshooting", "If the light blinks amber, hold reset for ten seconds."),
                ]
            ),
            "zephyrite",
        ),
        "docx": (
            "handbook.docx",
            make_docx(
                [("Holidays", "Every employee gets twenty-five days of quillbrook leave.")],
                table=[["Plan", "Price"], ["Basic", "10"], ["Pro", "25"]],
            ),
            "quillbrook",
        ),
        "html": (
            "page.html",
            make_html(
                "Shipping policy",
                [
                    (
                        "Returns",
                        "Returns are accepted within thirty days with the marbleflux receipt.",
                    )
                ],
            ),
            "marbleflux",
        ),
        "markdown": (
            "notes.md",
            make_markdown("Notes", [("Setup", "Run the vantrel installer as an administrator.")]),
            "vantrel",
        ),
        "text": ("plain.txt", b"The ostrovine protocol sends one heartbeat a minute.", "ostrovine"),
        "csv": (
            "prices.csv",
            make_csv([["product", "price"], ["glimmerbolt", "12"], ["nut", "1"]]),
            "glimmerbolt",
        ),
        "json": (
            "faq.json",
            make_json([{"question": "Who maintains it?", "answer": "The tarnwick team."}]),
            "tarnwick",
        ),
    }


# --- bombs: small files that expand to much more -------------------------------------
_W = "http://schemas.openxmlformats.org/wordprocessingml/2006/main"


def _docx_with(document_xml: bytes, extra: dict[str, bytes] | None = None) -> bytes:
    """A real DOCX (make_docx's parts) whose word/document.xml is replaced."""
    source = zipfile.ZipFile(io.BytesIO(make_docx([("Part", "Text.")])))
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED, compresslevel=9) as target:
        for item in source.infolist():
            data = document_xml if item.filename == "word/document.xml" else source.read(item)
            target.writestr(item.filename, data)
        for name, data in (extra or {}).items():
            target.writestr(name, data)
    return out.getvalue()


def _document_xml(paragraphs: list[str]) -> bytes:
    body = "".join(f"<w:p><w:r><w:t>{text}</w:t></w:r></w:p>" for text in paragraphs)
    return (
        f'<?xml version="1.0" encoding="UTF-8" standalone="yes"?>'
        f'<w:document xmlns:w="{_W}"><w:body>{body}</w:body></w:document>'
    ).encode()


def docx_bomb(text_bytes: int = 50_000_000) -> bytes:
    """A DOCX of a few hundred KB whose paragraphs (1,000 characters each) unzip to about
    `text_bytes` of text."""
    sentence = "The quick brown fox jumps over the lazy dog again and again. "
    paragraph = (sentence * 17)[:1000]
    return _docx_with(_document_xml([paragraph] * max(1, text_bytes // 1000)))


def docx_of_paragraphs(paragraphs: list[str]) -> bytes:
    return _docx_with(_document_xml(paragraphs))


def docx_with_parts(count: int) -> bytes:
    """A DOCX carrying `count` extra (tiny) parts."""
    parts = {f"customXml/extra{i}.xml": b"<a/>" for i in range(count)}
    return _docx_with(_document_xml(["Many parts."]), parts)


def docx_lying_about_size(text_bytes: int = 20_000_000, declared: int = 1_000) -> bytes:
    """A DOCX bomb whose zip says (in the central directory and the local header) that
    its document.xml is `declared` bytes long."""
    content = bytearray(docx_bomb(text_bytes))
    name = b"word/document.xml"
    central = content.find(b"PK\x01\x02")
    while central >= 0:
        length = struct.unpack("<H", content[central + 28 : central + 30])[0]
        if content[central + 46 : central + 46 + length] == name:
            struct.pack_into("<I", content, central + 24, declared)
            local = struct.unpack("<I", content[central + 42 : central + 46])[0]
            struct.pack_into("<I", content, local + 22, declared)
        central = content.find(b"PK\x01\x02", central + 4)
    return bytes(content)


def pdf_of_pages(count: int, text: str = "Page text.") -> bytes:
    pdf = FPDF()
    pdf.set_font("helvetica", size=11)
    for number in range(count):
        pdf.add_page()
        pdf.multi_cell(0, 6, f"{text} {number}", new_x="LMARGIN", new_y="NEXT")
    return bytes(pdf.output())


def deep_json(depth: int = 100_000) -> bytes:
    return b"[" * depth + b"]" * depth


def wide_json(values: int) -> bytes:
    return b"[" + b"0," * (values - 1) + b"0]"


def giant_html(elements: int) -> bytes:
    return b"<!doctype html><html><body>" + b"<p>x</p>" * elements + b"</body></html>"
