"""The LanceDB chunk store itself: upserts, deletes, filters (quoted, never injected)."""

from __future__ import annotations

import pytest

from knowledge.store.base import Chunk, Filters
from knowledge.store.lance import LanceStore


@pytest.fixture
def store(tmp_path) -> LanceStore:
    store = LanceStore(str(tmp_path / "lance"))
    store.create(table="t", dim=None)
    return store


def chunk(i: int, text: str, **extra) -> Chunk:
    return Chunk(id=f"c{i}", document_id=extra.pop("document_id", 1), ordinal=i, text=text, **extra)


def test_writing_the_same_chunks_twice_keeps_one_copy(store):
    chunks = [chunk(i, f"text {i}") for i in range(5)]
    store.upsert(table="t", chunks=chunks)
    store.upsert(table="t", chunks=chunks[2:])  # a second worker writing the same batch
    assert store.count(table="t") == 5
    chunks[0].ordinal = 9
    store.upsert(table="t", chunks=[chunks[0]])
    assert [c.ordinal for c in store.document_chunks(table="t", document_id=1)][-1] == 9


def test_delete_by_document_and_by_id(store):
    store.upsert(table="t", chunks=[chunk(1, "a"), chunk(2, "b", document_id=2), chunk(3, "c")])
    store.delete_chunks(table="t", ids=["c3"])
    store.delete_document(table="t", document_id=2)
    assert [c.id for c in store.document_chunks(table="t", document_id=1)] == ["c1"]
    assert store.count(table="t") == 1


def test_filters_restrict_the_search_and_quote_their_values(store):
    store.upsert(
        table="t",
        chunks=[
            chunk(1, "lighthouse keeper", heading="Guide > O'Brien", page=1, format="pdf"),
            chunk(2, "lighthouse lamp", heading="Other", page=5, format="pdf", document_id=2),
        ],
    )

    def ids(**filters) -> list[str]:
        hits = store.search(
            table="t", text="lighthouse", vector=None, mode="fts", k=5, filters=Filters(**filters)
        )
        return sorted(h.chunk.id for h in hits)

    assert ids() == ["c1", "c2"]
    assert ids(document_ids=[2]) == ["c2"]
    assert ids(page_min=2) == ["c2"]
    assert ids(heading_contains="o'brien") == ["c1"]
    assert ids(formats=["html"]) == []
    assert ids(heading_contains="x' OR '1'='1") == []  # a value, not SQL


def test_a_big_enough_table_gets_a_vector_index_that_search_uses(tmp_path):
    import math
    import random

    store = LanceStore(str(tmp_path / "ann"))
    store.create(table="v", dim=8)
    rng = random.Random(3)
    chunks = []
    for i in range(600):
        vector = [rng.gauss(0, 1) for _ in range(8)]
        norm = math.sqrt(sum(x * x for x in vector))
        chunks.append(chunk(i, f"row {i}", vector=[x / norm for x in vector]))
    store.upsert(table="v", chunks=chunks)
    assert store.optimize(table="v", ann_min_rows=1000)["vector_index_built"] is False
    assert store.optimize(table="v", ann_min_rows=500)["vector_index_built"] is True
    query = chunks[42].vector

    def top(**extra) -> list[str]:
        hits = store.search(
            table="v", text="", vector=query, mode="vector", k=5, filters=Filters(), **extra
        )
        return [h.chunk.id for h in hits]

    assert top()[0] == top(exact=True)[0] == "c42"
