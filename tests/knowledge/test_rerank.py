"""Optional re-ranking through litellm: a local server on 127.0.0.1 speaking Cohere's
rerank protocol (litellm posts to /v2/rerank) orders the candidates; when it fails, the
fused order stands."""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from knowledge.services.documents import document_add_text
from knowledge.services.ingest import document_ingest
from knowledge.services.search import knowledge_search

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def rerank_server():
    state = {"fail": False, "requests": []}

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args: object) -> None:
            pass

        def do_POST(self) -> None:  # noqa: N802
            body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
            state["requests"].append((self.path, body))
            if state["fail"]:
                self.send_response(500)
                self.end_headers()
                self.wfile.write(b'{"message": "overloaded"}')
                return
            # Relevance: the documents that mention "lighthouse" most come first.
            scores = [doc.lower().count("lighthouse") for doc in body["documents"]]
            order = sorted(range(len(scores)), key=lambda i: -scores[i])[: body["top_n"]]
            data = json.dumps(
                {
                    "id": "r1",
                    "results": [{"index": i, "relevance_score": scores[i] / 10} for i in order],
                    "meta": {"billed_units": {"search_units": 1}},
                }
            ).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{server.server_address[1]}", state
    server.shutdown()
    server.server_close()


def test_a_rerank_model_orders_the_candidates(fts_kb, settings, monkeypatch, rerank_server):
    url, state = rerank_server
    monkeypatch.setenv("COHERE_API_KEY", "test-key")
    texts = [
        "keeper keeper keeper of the coast",
        "the keeper of the lighthouse lighthouse lighthouse",
        "a keeper at the lighthouse",
    ]
    for text in texts:
        document_ingest(document_id=document_add_text(kb=fts_kb, text=text).id)
    fused = [r["text"] for r in knowledge_search(kb=fts_kb, query="keeper", k=2)["results"]]
    assert fused[0] == texts[0]  # BM25 likes the repeated word

    settings.STUDIO_KNOWLEDGE_RERANK_MODEL = "cohere/rerank-english-v3.0"
    settings.STUDIO_KNOWLEDGE_RERANK_API_BASE = url
    settings.STUDIO_MODEL_API_BASES = [url]  # a model server the operator lists
    result = knowledge_search(kb=fts_kb, query="keeper", k=2)
    assert result["reranked"] is True
    assert [r["text"] for r in result["results"]] == [texts[1], texts[2]]
    assert result["results"][0]["scores"]["rerank"] == 0.3
    path, body = state["requests"][-1]
    assert path in ("/v1/rerank", "/v2/rerank") and body["query"] == "keeper"
    assert len(body["documents"]) == 3

    skipped = knowledge_search(kb=fts_kb, query="keeper", k=2, rerank=False)
    assert "reranked" not in skipped and skipped["results"][0]["text"] == texts[0]

    state["fail"] = True
    fallback = knowledge_search(kb=fts_kb, query="keeper", k=2)
    assert fallback["reranked"] is False and "rerank model failed" in fallback["rerank_error"]
    assert [r["text"] for r in fallback["results"]] == fused
