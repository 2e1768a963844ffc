"""An embedding or rerank provider that quotes the server's key in its error: the error a
document keeps (and its owner reads) names the failure, not the key."""

from __future__ import annotations

import pytest

from knowledge.embeddings import EmbeddingError, embed
from tests.knowledge.embed_server import embeddings_server

KEY = "sk-canary-embedding-0123456789abcdef"


def test_an_embedding_error_quoting_the_servers_key_keeps_no_key(settings, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    with embeddings_server(quotes_key=True) as (url, _server):
        settings.STUDIO_KNOWLEDGE_EMBEDDING_API_BASE = url
        settings.STUDIO_MODEL_API_BASES = [url.removesuffix("/v1")]

        with pytest.raises(EmbeddingError) as failure:
            embed(["hello"], model="openai/text-embedding-3-small")

    message = str(failure.value)
    assert "Incorrect API key provided: [redacted]" in message
    assert KEY not in message
