"""Search a knowledge base: full text (BM25), vectors, or both fused (RRF), with
metadata filters; top k with scores, each result carrying what a citation needs."""

from __future__ import annotations

import re
from typing import Any
from urllib.parse import quote

from django.conf import settings

from common.exceptions import ApplicationError
from knowledge.embeddings import EmbeddingError, embed
from knowledge.models import Document, DocumentKind, KnowledgeBase
from knowledge.rerank import RerankError
from knowledge.rerank import rerank as rerank_model
from knowledge.store import Filters, Hit, get_store

MODES = ("hybrid", "fts", "vector")
# With a rerank model: candidates fetched per result wanted, and at most.
RERANK_DEPTH = 4
RERANK_MAX_CANDIDATES = 100
_MARKUP = re.compile(r"[#*_`|>\[\]()]+")


def filters_from(data: dict[str, Any] | None) -> Filters:
    data = data or {}
    return Filters(
        document_ids=data.get("documents"),
        kinds=data.get("kinds"),
        formats=data.get("formats"),
        page_min=data.get("page_min"),
        page_max=data.get("page_max"),
        heading_contains=data.get("heading"),
    )


def knowledge_search(
    *,
    kb: KnowledgeBase,
    query: str,
    k: int = 5,
    mode: str = "hybrid",
    filters: Filters | None = None,
    exact: bool = False,
    rerank: bool | None = None,
) -> dict[str, Any]:
    """Top `k` chunks. With a rerank model configured (and `rerank` not False), more
    candidates are fetched and the model orders them; if it fails, the fused order
    stands and `rerank_error` says why."""
    query = (query or "").strip()
    if not query:
        raise ApplicationError("The query is empty.", extra={"query": ["The query is empty."]})
    if mode not in MODES:
        raise ApplicationError(f"mode must be one of {', '.join(MODES)}.")
    if mode == "vector" and not kb.has_vectors:
        raise ApplicationError(
            "This knowledge base has no embedding model: it is searched by full text only.",
            code="no_vectors",
        )
    effective = mode if kb.has_vectors else "fts"
    vector = None
    if effective in ("hybrid", "vector"):
        try:
            vector = embed([query], model=kb.embedding_model)[0]
        except EmbeddingError as exc:
            raise ApplicationError(str(exc), status_code=502, code="embedding_failed") from None
    reranking = bool(settings.STUDIO_KNOWLEDGE_RERANK_MODEL) and rerank is not False
    hits = get_store().search(
        table=kb.table_name,
        text=query,
        vector=vector,
        mode=effective,
        k=min(RERANK_MAX_CANDIDATES, k * RERANK_DEPTH) if reranking else k,
        filters=filters or Filters(),
        exact=exact,
    )
    extra: dict[str, Any] = {}
    if reranking and hits:
        try:
            order = rerank_model(query, [h.chunk.text for h in hits], top_n=k)
            hits = [_reranked(hits[index], score) for index, score in order]
            extra["reranked"] = True
        except RerankError as exc:
            extra.update(reranked=False, rerank_error=str(exc))
        hits = hits[:k]
    documents = Document.objects.filter(kb=kb, id__in={h.chunk.document_id for h in hits}).defer(
        "content"
    )
    by_id = {document.id: document for document in documents}
    results = []
    for hit in hits:
        document = by_id.get(hit.chunk.document_id)
        if document is None:
            continue  # deleted while its chunks are being removed
        results.append(_result(kb, document, hit, len(results) + 1))
    return {
        "kind": "knowledge_search",
        "knowledge_base": kb.slug,
        "query": query,
        "mode": effective,
        **extra,
        "results": results,
    }


def _reranked(hit: Hit, score: float) -> Hit:
    return Hit(chunk=hit.chunk, score=score, scores={**hit.scores, "rerank": score})


def _result(kb: KnowledgeBase, document: Document, hit: Hit, rank: int) -> dict[str, Any]:
    chunk = hit.chunk
    viewer = f"/knowledge/{kb.slug}/documents/{document.id}/#chunk-{chunk.ordinal}"
    return {
        "citation": f"[{rank}]",
        "rank": rank,
        "score": round(hit.score, 6),
        "scores": {name: round(value, 6) for name, value in hit.scores.items()},
        "text": chunk.text,
        "heading": chunk.heading,
        "page": chunk.page,
        "chunk": chunk.ordinal,
        "chunk_id": chunk.id,
        "document": {
            "id": document.id,
            "name": document.display_name,
            "kind": document.kind,
            "format": document.format,
            "source_url": document.source_url,
        },
        "viewer_url": viewer,
        "url": _source_url(document, chunk.text) if document.kind == DocumentKind.URL else viewer,
    }


def _source_url(document: Document, text: str) -> str:
    """The original page, scrolled to the chunk's first words (a text fragment)."""
    words = _MARKUP.sub(" ", text).split()[:8]
    if not words:
        return document.source_url
    fragment = quote(" ".join(words), safe="").replace("-", "%2D")
    return f"{document.source_url.split('#')[0]}#:~:text={fragment}"
