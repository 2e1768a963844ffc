"""Small documents of every format the knowledge base reads, made by the tests."""

from __future__ import annotations

import csv
import io
import json

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
