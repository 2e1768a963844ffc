"""The gate of every model call (providers/gate.py) where a model string is saved beside
an agent: the provider's web search model and the embedding model of a knowledge base.
A refused model is a 400 naming the field, and no request leaves (the `ollama_canary`
server, where litellm would send an `ollama/...` model, sees no connection)."""

from __future__ import annotations

import pytest

from knowledge.models import KnowledgeBase

pytestmark = pytest.mark.django_db(transaction=True)

REFUSED = "ollama/ models call a server somebody runs"


def test_a_web_search_model_on_a_server_without_a_base_is_a_400(api, ollama_canary):
    response = api.put(
        "/api/settings/web-search/", {"provider": "native", "model": "ollama/llama3"}, format="json"
    )

    assert response.status_code == 400, response.json()
    assert response.json()["errors"][0]["path"] == "$.model"
    assert REFUSED in response.json()["errors"][0]["message"]


def test_a_knowledge_base_on_a_refused_embedding_model_is_a_400_and_calls_nothing(
    api, settings, ollama_canary
):
    settings.STUDIO_KNOWLEDGE_EMBEDDING_MODELS = ["ollama/nomic-embed-text"]

    response = api.post(
        "/api/knowledge/",
        {"name": "Docs", "embedding_model": "ollama/nomic-embed-text"},
        format="json",
    )

    assert response.status_code == 400, response.json()
    assert REFUSED in response.json()["embedding_model"][0]
    assert not KnowledgeBase.objects.exists()
    assert ollama_canary.connections == []
