"""bench.knowledge's second engine: the chunk store (knowledge.store.base.ChunkStore) on
PostgreSQL with pgvector, measured side by side with LanceDB (knowledge.store.lance), the
studio's store. It lives with the bench, not in knowledge/, because the measurement kept
LanceDB (docs/benchmarks.md, docs/knowledge.md); it stays so the comparison can be run
again on a newer PostgreSQL or pgvector.

One table per knowledge base, in the studio's database: its chunks with their vector (a
pgvector column of the base's dimension; `optimize` builds an HNSW index for cosine
distance once the table holds `ann_min_rows`, as LanceDB builds its IVF index) and a
generated `tsvector` of the text (English stemming and stop words, as LanceDB's
full-text index, indexed with GIN). Every statement runs on Django's connection.

Full-text search matches any of the query's words and ranks by `ts_rank_cd`; vector
search orders by cosine distance through the HNSW index (iterative scans, so metadata
filters still find k rows); hybrid search fuses the two lists with reciprocal rank
fusion (k = 60), each list as long as the results wanted.
"""

from __future__ import annotations

import re
from typing import Any

from django.db import connection, transaction

from knowledge.store.base import Chunk, Filters, Hit

COLUMNS = ["id", "document_id", "ordinal", "text", "heading", "page", "source", "format", "kind"]
RRF_K = 60
# Candidates the HNSW graph search keeps (hnsw.ef_search): at least the rows wanted.
EF_SEARCH = 200
HNSW_BUILD_MEMORY = "512MB"
_TABLE = re.compile(r"^[a-z0-9_]{1,40}$")
_SELECT = ", ".join(COLUMNS)


def _name(table: str) -> str:
    if not _TABLE.match(table):
        raise ValueError(f"not a chunk table name: {table!r}")
    return connection.ops.quote_name(f"knowledge_chunks_{table}")


def _vector_text(vector: list[float]) -> str:
    return "[" + ",".join(str(float(x)) for x in vector) + "]"


def where_clause(filters: Filters) -> tuple[str, list[Any]]:
    """The filter of a search as SQL with its parameters (every given filter must hold)."""
    given: list[tuple[str, Any]] = [
        ("document_id = ANY(%s)", _listed(filters.document_ids, int)),
        ("kind = ANY(%s)", _listed(filters.kinds, str)),
        ("format = ANY(%s)", _listed(filters.formats, str)),
        ("page >= %s", filters.page_min),
        ("page <= %s", filters.page_max),
        ("strpos(lower(heading), %s) > 0", (filters.heading_contains or "").lower() or None),
    ]
    kept = [(sql, value) for sql, value in given if value is not None]
    return " AND ".join(sql for sql, _ in kept) or "TRUE", [value for _, value in kept]


def _listed(values: list[Any] | None, kind: type) -> list[Any] | None:
    return None if values is None else [kind(value) for value in values]


class PgStore:
    def create(self, *, table: str, dim: int | None) -> None:
        name = _name(table)
        vector = f", vector vector({int(dim)}) NOT NULL" if dim else ""
        with connection.cursor() as cursor:
            cursor.execute(
                f"CREATE TABLE {name} ("
                "id text PRIMARY KEY, document_id bigint NOT NULL, ordinal integer NOT NULL, "
                "text text NOT NULL, heading text NOT NULL DEFAULT '', page integer, "
                "source text NOT NULL DEFAULT '', format text NOT NULL DEFAULT '', "
                "kind text NOT NULL DEFAULT ''"
                f"{vector}, "
                "search tsvector GENERATED ALWAYS AS (to_tsvector('english', text)) STORED)"
            )
            cursor.execute(f"CREATE INDEX ON {name} (document_id, ordinal)")
            cursor.execute(f"CREATE INDEX ON {name} USING gin (search)")

    def drop(self, *, table: str) -> None:
        with connection.cursor() as cursor:
            cursor.execute(f"DROP TABLE IF EXISTS {_name(table)}")

    def upsert(self, *, table: str, chunks: list[Chunk]) -> None:
        if not chunks:
            return
        name = _name(table)
        with connection.cursor() as cursor:
            cursor.execute(
                "SELECT 1 FROM pg_attribute WHERE attrelid = %s::regclass "
                "AND attname = 'vector' AND NOT attisdropped",
                [name],
            )
            with_vectors = cursor.fetchone() is not None
            columns = [*COLUMNS, "vector"] if with_vectors else COLUMNS
            types = ["text", "bigint", "integer", "text", "text", "integer", "text", "text", "text"]
            values: list[list[Any]] = [
                [c.id for c in chunks],
                [c.document_id for c in chunks],
                [c.ordinal for c in chunks],
                [c.text for c in chunks],
                [c.heading for c in chunks],
                [c.page for c in chunks],
                [c.source for c in chunks],
                [c.format for c in chunks],
                [c.kind for c in chunks],
            ]
            if with_vectors:
                missing = [c.id for c in chunks if c.vector is None]
                if missing:
                    raise ValueError(f"chunk {missing[0]} has no vector")
                types.append("text")
                values.append([_vector_text(c.vector or []) for c in chunks])
            arrays = ", ".join(f"%s::{t}[]" for t in types)
            selected = ", ".join(f"u.{c}::vector" if c == "vector" else f"u.{c}" for c in columns)
            updates = ", ".join(f"{c} = EXCLUDED.{c}" for c in columns if c != "id")
            cursor.execute(
                f"INSERT INTO {name} ({', '.join(columns)}) "
                f"SELECT {selected} FROM unnest({arrays}) AS u({', '.join(columns)}) "
                f"ON CONFLICT (id) DO UPDATE SET {updates}",
                values,
            )

    def document_chunks(
        self, *, table: str, document_id: int, with_vectors: bool = False
    ) -> list[Chunk]:
        name = _name(table)
        extra = ", vector::text" if with_vectors and self._has_vectors(name) else ""
        with connection.cursor() as cursor:
            cursor.execute(
                f"SELECT {_SELECT}{extra} FROM {name} WHERE document_id = %s ORDER BY ordinal",
                [int(document_id)],
            )
            return [_chunk(row) for row in cursor.fetchall()]

    def delete_document(self, *, table: str, document_id: int) -> None:
        with connection.cursor() as cursor:
            cursor.execute(f"DELETE FROM {_name(table)} WHERE document_id = %s", [int(document_id)])

    def delete_chunks(self, *, table: str, ids: list[str]) -> None:
        if ids:
            with connection.cursor() as cursor:
                cursor.execute(f"DELETE FROM {_name(table)} WHERE id = ANY(%s)", [list(ids)])

    def count(self, *, table: str) -> int:
        with connection.cursor() as cursor:
            cursor.execute(f"SELECT count(*) FROM {_name(table)}")
            return int(cursor.fetchone()[0])

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
    ) -> list[Hit]:
        name = _name(table)
        where, params = where_clause(filters)
        if mode == "hybrid" and vector is not None and text.strip():
            return _fused(
                _text_hits(name, text, k, where, params),
                _vector_hits(name, vector, k, where, params, exact),
                k,
            )
        if mode in ("vector", "hybrid") and vector is not None:
            return _vector_hits(name, vector, k, where, params, exact)
        if text.strip():
            return _text_hits(name, text, k, where, params)
        return []

    def optimize(self, *, table: str, ann_min_rows: int = 0) -> dict[str, Any]:
        """Build the HNSW index once the table is big enough (later writes keep it up to
        date), and refresh the planner's statistics."""
        name = _name(table)
        rows = self.count(table=table)
        built = False
        if ann_min_rows and rows >= ann_min_rows and self._has_vectors(name):
            with transaction.atomic(), connection.cursor() as cursor:
                cursor.execute(f"SET LOCAL maintenance_work_mem = '{HNSW_BUILD_MEMORY}'")
                cursor.execute(
                    f'CREATE INDEX IF NOT EXISTS {name[:-1]}_hnsw" ON {name} '
                    "USING hnsw (vector vector_cosine_ops)"
                )
            built = True
        with connection.cursor() as cursor:
            cursor.execute(f"ANALYZE {name}")
        return {"rows": rows, "vector_index_built": built}

    def _has_vectors(self, name: str) -> bool:
        with connection.cursor() as cursor:
            cursor.execute(
                "SELECT 1 FROM pg_attribute WHERE attrelid = %s::regclass "
                "AND attname = 'vector' AND NOT attisdropped",
                [name],
            )
            return cursor.fetchone() is not None


def _text_hits(name: str, text: str, k: int, where: str, params: list[Any]) -> list[Hit]:
    """Chunks holding any of the query's words (stemmed, stop words left out), best
    ranked first."""
    with connection.cursor() as cursor:
        cursor.execute(
            "WITH q AS (SELECT to_tsquery('simple', coalesce(string_agg(quote_literal(w), "
            "' | '), '')) AS q FROM unnest(tsvector_to_array(to_tsvector('english', %s))) w) "
            f"SELECT {_SELECT}, ts_rank_cd(search, q.q) AS score FROM {name}, q "
            f"WHERE search @@ q.q AND {where} ORDER BY score DESC, id LIMIT %s",
            [text, *params, k],
        )
        return [
            Hit(chunk=_chunk(row[:-1]), score=float(row[-1]), scores={"text": float(row[-1])})
            for row in cursor.fetchall()
        ]


def _vector_hits(
    name: str, vector: list[float], k: int, where: str, params: list[Any], exact: bool
) -> list[Hit]:
    """The k nearest chunks by cosine distance: through the HNSW index, or (exact) by
    comparing with every chunk."""
    query = _vector_text(vector)
    with transaction.atomic(), connection.cursor() as cursor:
        if exact:
            cursor.execute("SET LOCAL enable_indexscan = off")
        else:
            # The planner's cost of an HNSW scan grows with ef_search: below some 50,000
            # rows it picks a scan of every row instead, so the index is asked for.
            cursor.execute(
                "SELECT set_config('hnsw.ef_search', %s, true), "
                "set_config('hnsw.iterative_scan', 'strict_order', true), "
                "set_config('enable_seqscan', 'off', true)",
                [str(max(EF_SEARCH, k))],
            )
        cursor.execute(
            f"SELECT {_SELECT}, vector <=> %s::vector AS distance FROM {name} "
            f"WHERE {where} ORDER BY distance LIMIT %s",
            [query, *params, k],
        )
        rows = cursor.fetchall()
    hits = []
    for row in rows:
        similarity = 1.0 - float(row[-1])
        hits.append(Hit(chunk=_chunk(row[:-1]), score=similarity, scores={"vector": similarity}))
    return hits


def _fused(text_hits: list[Hit], vector_hits: list[Hit], k: int) -> list[Hit]:
    """Reciprocal rank fusion of the two lists: each chunk scores the sum of
    1 / (rank + 60) over the lists it is in."""
    fused: dict[str, Hit] = {}
    for hits in (vector_hits, text_hits):
        for rank, hit in enumerate(hits, 1):
            into = fused.setdefault(hit.chunk.id, Hit(chunk=hit.chunk, score=0.0))
            into.scores.update(hit.scores)
            into.score += 1.0 / (rank + RRF_K)
    ordered = sorted(fused.values(), key=lambda h: h.score, reverse=True)[:k]
    for hit in ordered:
        hit.scores["fused"] = hit.score
    return ordered


def _chunk(row: tuple[Any, ...]) -> Chunk:
    vector = row[9] if len(row) > 9 else None
    return Chunk(
        id=row[0],
        document_id=row[1],
        ordinal=row[2],
        text=row[3],
        heading=row[4] or "",
        page=row[5],
        source=row[6] or "",
        format=row[7] or "",
        kind=row[8] or "",
        vector=[float(x) for x in vector.strip("[]").split(",")] if vector else None,
    )
