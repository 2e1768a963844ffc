"""Blocks to chunks: text is cut by semchunk (paragraph, then sentence, then word
boundaries) into chunks of at most `chunk_chars` characters that overlap by
`overlap` characters; tables are cut by rows, each chunk repeating the header, so
that every chunk of a table stays readable on its own. A chunk never spans two
sections or two pages: it keeps the heading path and the page of its text.
"""

from __future__ import annotations

from dataclasses import dataclass

import semchunk

from knowledge.parsing.base import Block
from knowledge.parsing.limits import too_large

HEADING_SEPARATOR = " > "
# Every chunk carries its heading path: a path is cut here, so that a document of
# enormous headings cannot multiply its size by its chunk count.
HEADING_MAX_CHARS = 1000


@dataclass
class Draft:
    text: str
    heading: str
    page: int | None
    table: bool = False


def chunk_blocks(
    blocks: list[Block], *, chunk_chars: int, overlap: int, max_chunks: int | None = None
) -> list[Draft]:
    """The chunks of the blocks; more than `max_chunks` (None: no limit) is TooLarge,
    found section by section, before the rest is cut."""
    chunker = semchunk.chunkerify(len, chunk_chars)
    drafts: list[Draft] = []
    for group in _groups(blocks):
        _check_count(drafts, max_chunks)
        heading = HEADING_SEPARATOR.join(group[0].heading)[:HEADING_MAX_CHARS]
        page = group[0].page
        if group[0].table:
            for text in _table_chunks(group[0].text, chunk_chars):
                drafts.append(Draft(text=text, heading=heading, page=page, table=True))
            continue
        text = "\n\n".join(block.text.strip() for block in group if block.text.strip())
        if not text:
            continue
        pieces = chunker(text, overlap=min(overlap, chunk_chars // 2) or None)
        drafts.extend(
            Draft(text=piece.strip(), heading=heading, page=page)
            for piece in pieces
            if piece.strip()
        )
    _check_count(drafts, max_chunks)
    return drafts


def _check_count(drafts: list[Draft], max_chunks: int | None) -> None:
    if max_chunks is not None and len(drafts) > max_chunks:
        raise too_large(f"it makes more than {max_chunks:,} chunks", max_chunks, "MAX_CHUNKS")


def _groups(blocks: list[Block]) -> list[list[Block]]:
    """Runs of text blocks under the same heading on the same page; tables alone."""
    groups: list[list[Block]] = []
    for block in blocks:
        last = groups[-1] if groups else None
        if (
            last is not None
            and not block.table
            and not last[0].table
            and last[0].heading == block.heading
            and last[0].page == block.page
        ):
            last.append(block)
        else:
            groups.append([block])
    return groups


def _table_chunks(text: str, chunk_chars: int) -> list[str]:
    lines = [line for line in text.splitlines() if line.strip()]
    header: list[str] = []
    if len(lines) >= 2 and set(lines[1].replace("|", "").strip()) <= {"-", ":", " "}:
        header, lines = lines[:2], lines[2:]
    head = "\n".join(header)
    chunks: list[str] = []
    current: list[str] = []
    size = len(head)
    for line in lines:
        if current and size + len(line) + 1 > chunk_chars:
            chunks.append("\n".join([*header, *current]))
            current, size = [], len(head)
        current.append(line)
        size += len(line) + 1
    if current or not chunks:
        chunks.append("\n".join([*header, *current]))
    return chunks
