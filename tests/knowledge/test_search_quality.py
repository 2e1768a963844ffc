"""Search quality on a small labelled set, with the packaged CPU embedding model:
hybrid search beats full text alone and vectors alone."""

from __future__ import annotations

import pytest

from bench._knowledge_set import DOCUMENTS, QUERIES, scores
from knowledge.embedding_models import local_available
from knowledge.services.documents import document_add_text
from knowledge.services.ingest import document_ingest
from knowledge.services.search import knowledge_search

LOCAL_MODEL = "local/all-minilm-l6-v2"
pytestmark = [
    pytest.mark.django_db(transaction=True),
    pytest.mark.skipif(not local_available(LOCAL_MODEL), reason="the embed extra is not installed"),
]


def test_hybrid_beats_each_half_alone(make_kb, owner, settings):
    settings.STUDIO_KNOWLEDGE_EMBEDDING_MODEL = LOCAL_MODEL
    kb = make_kb(owner, "help", embedding_model=LOCAL_MODEL)
    assert kb.embedding_dim == 384
    ids = {}
    for name, text in DOCUMENTS.items():
        document = document_add_text(kb=kb, title=name, text=text)
        document_ingest(document_id=document.id)
        ids[document.id] = name
    results = {}
    for mode in ("fts", "vector", "hybrid"):
        runs = []
        for question, wanted, _ in QUERIES:
            hits = knowledge_search(kb=kb, query=question, k=10, mode=mode)["results"]
            runs.append(([ids[h["document"]["id"]] for h in hits], wanted))
        results[mode] = scores(runs)
    print(results)
    assert results["hybrid"]["mrr"] > results["fts"]["mrr"]
    assert results["hybrid"]["mrr"] > results["vector"]["mrr"]
    assert results["hybrid"]["recall@5"] >= max(
        results["fts"]["recall@5"], results["vector"]["recall@5"]
    )
