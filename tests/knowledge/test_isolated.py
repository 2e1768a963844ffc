"""A document is read in a child process: its memory and time are limited, and a worker
that stops waiting (the document was cancelled) kills it."""

from __future__ import annotations

import json
import os
import signal

import pytest

from knowledge.parsing import Limits, ParseError, TooLarge
from knowledge.parsing.isolated import Job, read_isolated
from tests.knowledge.files import docx_of_paragraphs, make_markdown
from tests.knowledge.processes import alive, parser_children


def job(content: bytes, fmt: str, **extra) -> Job:
    fields = {"limits": Limits(), "chunk_chars": 1200, "overlap": 200}
    fields |= {"memory_mb": 1024, "seconds": 120} | extra
    return Job(content=content, format=fmt, **fields)


def slow_docx() -> bytes:
    """About 200,000 short paragraphs: many seconds of python-docx."""
    return docx_of_paragraphs([f"p{i}" for i in range(200_000)])


def test_a_document_is_read_into_chunks_in_a_child():
    content = make_markdown("Guide", [("Setup", "Run the installer.")])
    reading = read_isolated(job(content, "markdown"), beat=lambda: None)
    assert [(d.heading, d.text) for d in reading.drafts] == [
        ("Guide > Setup", "Run the installer.")
    ]
    assert reading.title == "Guide"
    assert reading.peak_rss_mb > 0


def test_a_child_over_its_memory_is_refused_with_the_limit_named():
    content = json.dumps([{"a": i} for i in range(300_000)]).encode()
    with pytest.raises(TooLarge, match="STUDIO_KNOWLEDGE_PARSE_MEMORY_MB") as caught:
        read_isolated(job(content, "json", memory_mb=30), beat=lambda: None)
    assert "30 MB" in str(caught.value)
    assert parser_children(os.getpid()) == []


def test_a_child_over_its_time_is_killed_and_refused():
    with pytest.raises(TooLarge, match="STUDIO_KNOWLEDGE_PARSE_SECONDS"):
        read_isolated(job(slow_docx(), "docx", seconds=1), beat=lambda: None)
    assert parser_children(os.getpid()) == []


def test_a_parse_error_in_the_child_comes_back_as_the_documents_reason():
    with pytest.raises(ParseError, match="not valid JSON") as caught:
        read_isolated(job(b'{"broken": ', "json"), beat=lambda: None)
    assert not isinstance(caught.value, TooLarge)


class Cancelled(Exception):
    pass


def test_when_the_worker_stops_waiting_the_child_is_killed():
    seen: list[int] = []

    def beat() -> None:
        seen.extend(parser_children(os.getpid()))
        if seen:
            raise Cancelled

    with pytest.raises(Cancelled):
        read_isolated(job(slow_docx(), "docx"), beat=beat)
    assert seen and not any(alive(pid) for pid in seen)


def test_a_child_killed_from_outside_is_reported_as_over_its_memory():
    def oom_killer() -> None:  # what the kernel's OOM killer does to a process
        for pid in parser_children(os.getpid()):
            os.kill(pid, signal.SIGKILL)

    with pytest.raises(TooLarge, match="signal 9.*STUDIO_KNOWLEDGE_PARSE_MEMORY_MB"):
        read_isolated(job(slow_docx(), "docx"), beat=oom_killer)
