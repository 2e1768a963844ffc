"""`similar` with an embedding model: the cosine of the vectors a real OpenAI-protocol
embeddings server on 127.0.0.1 returns (through the knowledge app's client); a server
that fails makes the expectation fail with the reason, not the case crash."""

from __future__ import annotations

import pytest

from evals.expectations import Observation, check_turn
from evals.judge import lexical_similarity, similarity_measure
from tests.evals.conftest import free_port_url
from tests.knowledge.embed_server import embeddings_server, hashed_vector

MODEL = "openai/fake-embed"


def test_without_a_model_the_measure_is_lexical(settings):
    settings.STUDIO_EVAL_SIMILARITY_MODEL = ""
    assert similarity_measure() is lexical_similarity


def test_with_a_model_the_measure_is_the_cosine_of_its_vectors(settings, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "test-key")  # the local server ignores it
    reference, answer = "Paris is cloudy today", "cloudy skies over Paris"
    expected = sum(a * b for a, b in zip(hashed_vector(reference), hashed_vector(answer)))
    with embeddings_server() as (url, server):
        settings.STUDIO_EVAL_SIMILARITY_MODEL = MODEL
        settings.STUDIO_KNOWLEDGE_EMBEDDING_API_BASE = url
        settings.STUDIO_MODEL_API_BASES = [url.removesuffix("/v1")]
        score = similarity_measure()(reference, answer)
    assert server.requests == 1 and server.texts == 2
    assert score == pytest.approx(max(0.0, expected), abs=1e-6) and score > 0


def test_an_unreachable_embedding_server_fails_the_expectation(settings):
    settings.STUDIO_EVAL_SIMILARITY_MODEL = MODEL
    settings.STUDIO_KNOWLEDGE_EMBEDDING_API_BASE = free_port_url()
    settings.STUDIO_MODEL_API_BASES = [settings.STUDIO_KNOWLEDGE_EMBEDDING_API_BASE]
    settings.STUDIO_KNOWLEDGE_EMBEDDING_TIMEOUT = 5
    (verdict,) = check_turn(
        [{"type": "similar", "reference": "Paris"}],
        Observation(answer="Paris"),
        similarity=similarity_measure(),
    )
    assert not verdict.passed and "could not be measured" in verdict.reason
