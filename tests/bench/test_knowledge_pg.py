"""bench.knowledge's PostgreSQL engine (bench/_knowledge_pg.py): it answers as the studio's
store does, so the side-by-side figures compare like with like."""

from __future__ import annotations

import math

import pytest
from django.db import connection

from bench._knowledge_pg import PgStore
from knowledge.store.base import Chunk, Filters

pytestmark = pytest.mark.django_db


@pytest.fixture
def store():
    with connection.cursor() as cursor:
        cursor.execute("SELECT 1 FROM pg_available_extensions WHERE name = 'vector'")
        if cursor.fetchone() is None:
            pytest.skip("this PostgreSQL has no pgvector (the embedded PostgreSQL 18 has)")
        cursor.execute("CREATE EXTENSION IF NOT EXISTS vector")
    pg = PgStore()
    pg.create(table="kb_t", dim=3)
    return pg


def _unit(*xs: float) -> list[float]:
    norm = math.sqrt(sum(x * x for x in xs))
    return [x / norm for x in xs]


def _chunks() -> list[Chunk]:
    return [
        Chunk("a", 1, 0, "Refunds reach your card in five days", "Billing", 1, kind="file",
              format="pdf", vector=_unit(1, 0, 0)),
        Chunk("b", 1, 1, "Parcels arrive in three days", "Shipping", 2, kind="file",
              format="pdf", vector=_unit(0, 1, 0)),
        Chunk("c", 2, 0, "Error E-4711 means the token expired", "Errors", 7, kind="url",
              format="html", vector=_unit(0, 0, 1)),
    ]  # fmt: skip


def _ids(hits) -> list[str]:
    return [hit.chunk.id for hit in hits]


def test_full_text_stems_and_ranks_any_word(store):
    store.upsert(table="kb_t", chunks=_chunks())
    hits = store.search(
        table="kb_t", text="refund", vector=None, mode="fts", k=5, filters=Filters()
    )
    assert _ids(hits) == ["a"]
    assert hits[0].scores["text"] > 0
    hits = store.search(
        table="kb_t", text="E-4711 parcels", vector=None, mode="fts", k=5, filters=Filters()
    )
    assert set(_ids(hits)) == {"b", "c"}
    assert (
        store.search(table="kb_t", text="the", vector=None, mode="fts", k=5, filters=Filters())
        == []
    )  # stop words alone match nothing


@pytest.mark.parametrize("indexed", [False, True])
def test_vectors_nearest_first_exact_and_through_hnsw(store, indexed):
    store.upsert(table="kb_t", chunks=_chunks())
    if indexed:
        assert store.optimize(table="kb_t", ann_min_rows=1)["vector_index_built"]
    query = _unit(0.1, 1, 0.2)
    for exact in (True, False):
        hits = store.search(
            table="kb_t", text="", vector=query, mode="vector", k=2, filters=Filters(),
            exact=exact,
        )  # fmt: skip
        assert _ids(hits) == ["b", "c"]
        assert hits[0].scores["vector"] == pytest.approx(query[1], abs=1e-5)


def test_hybrid_fuses_both_lists_by_rank(store):
    store.upsert(table="kb_t", chunks=_chunks())
    hits = store.search(
        table="kb_t", text="E-4711", vector=_unit(1, 0, 0.1), mode="hybrid", k=3,
        filters=Filters(),
    )  # fmt: skip
    assert _ids(hits) == ["c", "a", "b"]
    first = {hit.chunk.id: hit for hit in hits}
    assert first["c"].scores["fused"] == pytest.approx(1 / 61 + 1 / 62)
    assert set(first["c"].scores) == {"text", "vector", "fused"}


def test_filters_each_restrict(store):
    store.upsert(table="kb_t", chunks=_chunks())
    vector = _unit(1, 1, 1)

    def ids(**filters) -> set[str]:
        hits = store.search(
            table="kb_t", text="", vector=vector, mode="vector", k=5,
            filters=Filters(**filters),
        )  # fmt: skip
        return set(_ids(hits))

    assert ids(document_ids=[2]) == {"c"}
    assert ids(document_ids=[]) == set()
    assert ids(kinds=["file"]) == {"a", "b"}
    assert ids(formats=["html"]) == {"c"}
    assert ids(page_min=2, page_max=6) == {"b"}
    assert ids(heading_contains="SHIP") == {"b"}
    assert ids(heading_contains="50%_") == set()  # matched literally, not as a pattern


def test_upsert_replaces_by_id_and_deletes(store):
    store.upsert(table="kb_t", chunks=_chunks())
    moved = _chunks()[1]
    moved.ordinal = 5
    store.upsert(table="kb_t", chunks=[moved])
    assert store.count(table="kb_t") == 3
    chunks = store.document_chunks(table="kb_t", document_id=1, with_vectors=True)
    assert [(c.id, c.ordinal) for c in chunks] == [("a", 0), ("b", 5)]
    assert chunks[1].vector == pytest.approx(_unit(0, 1, 0))
    store.delete_chunks(table="kb_t", ids=["a"])
    store.delete_document(table="kb_t", document_id=2)
    assert [c.id for c in store.document_chunks(table="kb_t", document_id=1)] == ["b"]
    assert store.count(table="kb_t") == 1
    store.drop(table="kb_t")
    store.drop(table="kb_t")  # gone already: no error


def test_bad_input_is_refused(store):
    chunk = _chunks()[0]
    chunk.vector = None
    with pytest.raises(ValueError, match="has no vector"):
        store.upsert(table="kb_t", chunks=[chunk])
    with pytest.raises(ValueError, match="not a chunk table name"):
        store.count(table='kb"; DROP TABLE x; --')
