"""What the chunk store holds and answers, and the interface every engine implements."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Protocol


@dataclass
class Chunk:
    id: str
    document_id: int
    ordinal: int
    text: str
    heading: str = ""
    page: int | None = None
    source: str = ""
    format: str = ""
    kind: str = ""
    vector: list[float] | None = None


@dataclass
class Hit:
    chunk: Chunk
    score: float
    scores: dict[str, float] = field(default_factory=dict)


@dataclass
class Filters:
    """Metadata filters of a search: every given one must hold."""

    document_ids: list[int] | None = None
    kinds: list[str] | None = None
    formats: list[str] | None = None
    page_min: int | None = None
    page_max: int | None = None
    heading_contains: str | None = None


class ChunkStore(Protocol):
    def create(self, *, table: str, dim: int | None) -> None: ...

    def drop(self, *, table: str) -> None: ...

    def upsert(self, *, table: str, chunks: list[Chunk]) -> None: ...

    def document_chunks(
        self, *, table: str, document_id: int, with_vectors: bool = False
    ) -> list[Chunk]: ...

    def delete_document(self, *, table: str, document_id: int) -> None: ...

    def delete_chunks(self, *, table: str, ids: list[str]) -> None: ...

    def count(self, *, table: str) -> int: ...

    def search(
        self,
        *,
        table: str,
        text: str,
        vector: list[float] | None,
        mode: str,
        k: int,
        filters: Filters,
        exact: bool = False,
    ) -> list[Hit]: ...

    def optimize(self, *, table: str, ann_min_rows: int = 0) -> dict[str, Any]: ...
