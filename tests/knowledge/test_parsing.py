"""Parsing and chunking of every format: headings, pages, tables, overlap, sniffing."""

from __future__ import annotations

import pytest

from knowledge.parsing import ParseError, UnsupportedFormat, parse, sniff
from knowledge.parsing.chunking import chunk_blocks
from tests.knowledge.files import make_csv, make_docx, make_pdf, sample_files


@pytest.mark.parametrize("fmt", ["pdf", "docx", "html", "markdown", "text", "csv", "json"])
def test_each_format_is_sniffed_from_its_content_and_parsed(fmt):
    name, content, word = sample_files()[fmt]
    assert sniff(content, filename=name) == fmt
    parsed = parse(content, format=fmt)
    assert word in " ".join(block.text for block in parsed.blocks)


def test_pdf_chunks_keep_their_page_and_bookmark_heading():
    content = make_pdf([("Intro", "alpha " * 50), ("Usage", "beta " * 50)])
    parsed = parse(content, format="pdf")
    drafts = chunk_blocks(parsed.blocks, chunk_chars=2000, overlap=100)
    assert parsed.pages == 2
    assert [(d.page, d.heading) for d in drafts] == [(1, "Intro"), (2, "Usage")]


def test_docx_keeps_the_heading_path_and_the_table_as_rows():
    content = make_docx([("Leave", "Text about leave.")], table=[["Plan", "Price"], ["Pro", "25"]])
    drafts = chunk_blocks(parse(content, format="docx").blocks, chunk_chars=500, overlap=50)
    texts = {d.text: d for d in drafts}
    assert texts["Text about leave."].heading == "Employee handbook > Leave"
    table = next(d for d in drafts if d.table)
    assert table.text.splitlines()[0] == "| Plan | Price |"
    assert "| Pro | 25 |" in table.text


def test_a_long_table_is_cut_by_rows_and_every_chunk_repeats_the_header():
    rows = [["sku", "name"]] + [[f"A{i:03}", f"item number {i}"] for i in range(60)]
    drafts = chunk_blocks(parse(make_csv(rows), format="csv").blocks, chunk_chars=300, overlap=50)
    assert len(drafts) > 3
    for draft in drafts:
        assert draft.text.startswith("| sku | name |\n|---|---|\n")
    body_rows = [line for d in drafts for line in d.text.splitlines()[2:]]
    assert len(body_rows) == 60  # no row lost or split


def test_long_text_is_cut_with_overlap_and_a_chunk_never_crosses_a_heading():
    text = "# Guide\n\n## One\n\n" + " ".join(f"Sentence {i} of part one." for i in range(80))
    text += "\n\n## Two\n\nShort part two."
    drafts = chunk_blocks(
        parse(text.encode(), format="markdown").blocks, chunk_chars=300, overlap=80
    )
    one = [d for d in drafts if d.heading == "Guide > One"]
    assert len(one) > 3 and all(len(d.text) <= 300 for d in one)
    # consecutive chunks share text (the overlap): the next one starts inside the last
    for first, second in zip(one, one[1:]):
        assert second.text[:25] in first.text
    assert [d.text for d in drafts if d.heading == "Guide > Two"] == ["Short part two."]


@pytest.mark.parametrize(
    ("content", "name", "message"),
    [
        (b"not really a pdf", "x.pdf", "not one"),
        (b"PK\x03\x04garbage", "x.docx", "damaged"),
        (b"\x89PNG\r\n\x1a\n\x00\x00", "x.png", "Binary files"),
    ],
)
def test_files_that_are_not_what_they_claim_are_refused(content, name, message):
    with pytest.raises(UnsupportedFormat, match=message):
        sniff(content, filename=name)


def test_invalid_json_is_refused_with_the_parser_message():
    with pytest.raises(ParseError, match="not valid JSON"):
        sniff(b'{"a": ', filename="x.json")


def test_a_pdf_without_text_fails_with_the_reason():
    with pytest.raises(ParseError, match="no text"):
        parse(make_pdf([("", "")]), format="pdf")
