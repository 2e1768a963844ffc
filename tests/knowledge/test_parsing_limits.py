"""Each parser is bounded by what it produces: a small file that expands to much more is
refused by name, before the rest of it is read."""

from __future__ import annotations

import json

import pytest

from knowledge.parsing import Limits, ParseError, TooLarge, parse, sniff
from knowledge.parsing.base import Block
from knowledge.parsing.chunking import HEADING_MAX_CHARS, chunk_blocks
from knowledge.parsing.limits import zip_entry_count
from tests.knowledge.files import (
    deep_json,
    docx_bomb,
    docx_lying_about_size,
    docx_of_paragraphs,
    docx_with_parts,
    giant_html,
    make_csv,
    make_docx,
    make_pdf,
    pdf_of_pages,
    wide_json,
)


def refusal(content: bytes, fmt: str, **limits: int) -> str:
    with pytest.raises(TooLarge) as caught:
        parse(content, format=fmt, limits=Limits(**limits))
    return str(caught.value)


def test_a_docx_that_expands_hundreds_of_times_is_refused_by_its_declared_ratio():
    bomb = docx_bomb(50_000_000)
    assert len(bomb) < 250_000
    message = refusal(bomb, "docx")
    assert "word/document.xml expands" in message
    assert "STUDIO_KNOWLEDGE_MAX_ZIP_RATIO" in message
    with pytest.raises(TooLarge, match="MAX_ZIP_RATIO"):  # at upload, before any row
        sniff(bomb, filename="bomb.docx", limits=Limits())


def test_a_docx_of_too_many_parts_is_refused_from_its_end_record():
    content = docx_with_parts(60)
    assert zip_entry_count(content) > 60
    assert "parts" in refusal(content, "docx", max_zip_parts=50)
    with pytest.raises(TooLarge, match="MAX_ZIP_PARTS"):
        sniff(content, filename="x.docx", limits=Limits(max_zip_parts=50))


def test_a_docx_whose_parts_unzip_to_more_than_the_limit_is_refused():
    content = make_docx([("Part", "Text.")])
    assert "MAX_UNZIPPED_BYTES" in refusal(content, "docx", max_unzipped_bytes=10_000)


def test_a_docx_that_lies_about_its_sizes_is_refused_when_read_not_expanded():
    content = docx_lying_about_size(5_000_000, declared=1_000)
    limits = Limits(max_unzipped_bytes=2_000_000)  # the template's parts take 0.8 MB
    assert sniff(content, filename="x.docx", limits=limits) == "docx"  # the sizes pass
    with pytest.raises(ParseError, match="damaged") as caught:
        parse(content, format="docx", limits=limits)
    assert not isinstance(caught.value, TooLarge)


def test_a_docx_of_more_text_than_the_limit_is_refused():
    content = docx_of_paragraphs([f"Paragraph number {i}." for i in range(200)])
    assert "MAX_TEXT_CHARS" in refusal(content, "docx", max_text_chars=1_000)
    assert len(parse(content, format="docx", limits=Limits()).blocks) == 200


def test_a_pdf_of_more_pages_than_the_limit_is_refused():
    assert "4 pages" in refusal(pdf_of_pages(4), "pdf", max_pdf_pages=3)
    assert parse(pdf_of_pages(3), format="pdf", limits=Limits(max_pdf_pages=3)).pages == 3


def test_a_pdf_stream_that_expands_past_the_limit_is_refused():
    content = make_pdf([("Long", "A line of words on the page. " * 400)])
    message = refusal(content, "pdf", max_unzipped_bytes=5_000)
    assert "compressed stream" in message and "MAX_UNZIPPED_BYTES" in message


def test_a_pdf_of_more_text_than_the_limit_is_refused():
    assert "MAX_TEXT_CHARS" in refusal(pdf_of_pages(20), "pdf", max_text_chars=100)


def test_an_html_page_of_more_elements_than_the_limit_is_refused():
    assert "HTML elements" in refusal(giant_html(2_000), "html", max_html_nodes=1_000)
    assert parse(giant_html(500), format="html", limits=Limits(max_html_nodes=1_000)).blocks


def test_json_nested_too_deep_is_refused_with_its_path_before_it_is_parsed():
    message = refusal(deep_json(100_000), "json")
    assert "nested more than 64 levels deep" in message
    assert "STUDIO_KNOWLEDGE_MAX_JSON_DEPTH" in message
    with pytest.raises(TooLarge, match="MAX_JSON_DEPTH"):
        sniff(deep_json(100_000), filename="x.json", limits=Limits())


def test_json_of_more_values_than_the_limit_is_refused():
    assert "MAX_JSON_VALUES" in refusal(wide_json(2_000), "json", max_json_values=1_000)
    content = json.dumps([{"a": i} for i in range(10)]).encode()
    assert len(parse(content, format="json", limits=Limits(max_json_values=1_000)).blocks) == 10


@pytest.mark.parametrize(
    ("fmt", "content"),
    [
        ("text", b"word " * 1_000),
        ("markdown", b"# Title\n\n" + b"word " * 1_000),
        ("csv", make_csv([["a", "b"]] + [[str(i), "x"] for i in range(500)])),
        ("json", json.dumps({"key": "word " * 1_000}).encode()),
    ],
)
def test_every_text_format_is_held_to_the_text_limit(fmt, content):
    assert "MAX_TEXT_CHARS" in refusal(content, fmt, max_text_chars=1_000)


def test_more_chunks_than_the_limit_are_refused():
    blocks = [Block(text="word " * 100, heading=[f"Section {i}"]) for i in range(30)]
    assert len(chunk_blocks(blocks, chunk_chars=600, overlap=0, max_chunks=30)) == 30
    with pytest.raises(TooLarge, match="STUDIO_KNOWLEDGE_MAX_CHUNKS"):
        chunk_blocks(blocks, chunk_chars=600, overlap=0, max_chunks=29)


def test_a_heading_path_is_cut_so_that_every_chunk_does_not_repeat_a_huge_heading():
    blocks = [Block(text="word " * 500, heading=["h" * 100_000])]
    drafts = chunk_blocks(blocks, chunk_chars=300, overlap=0)
    assert len(drafts) > 5
    assert all(len(draft.heading) == HEADING_MAX_CHARS for draft in drafts)
