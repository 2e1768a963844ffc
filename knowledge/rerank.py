"""Optional re-ranking of search candidates by a rerank model through litellm
(`cohere/rerank-english-v3.0`, `jina_ai/...`, a self-hosted Cohere-compatible server at
settings.STUDIO_KNOWLEDGE_RERANK_API_BASE...), configured by the operator with
settings.STUDIO_KNOWLEDGE_RERANK_MODEL. litellm is imported only when it is used."""

from __future__ import annotations

from django.conf import settings

from knowledge.embeddings import failure_text
from providers.gate import model_refusal


class RerankError(RuntimeError):
    """The rerank model failed; the search falls back to the fused order."""


def rerank(query: str, texts: list[str], *, top_n: int) -> list[tuple[int, float]]:
    """(index into `texts`, relevance) of the best `top_n`, best first."""
    model = settings.STUDIO_KNOWLEDGE_RERANK_MODEL
    base = settings.STUDIO_KNOWLEDGE_RERANK_API_BASE
    refusal = model_refusal(model, api_base=base)
    if refusal:
        raise RerankError(f"The rerank model {model} was not called: {refusal}")
    import litellm

    kwargs = {"api_base": base} if base else {}
    try:
        response = litellm.rerank(
            model=model,
            query=query,
            documents=texts,
            top_n=top_n,
            timeout=settings.STUDIO_KNOWLEDGE_EMBEDDING_TIMEOUT,
            **kwargs,
        )
        ranked = [(int(item["index"]), float(item["relevance_score"])) for item in response.results]
    except Exception as exc:  # noqa: BLE001 - litellm maps every provider's errors to many types
        raise RerankError(f"The rerank model failed: {failure_text(exc, model)}") from None
    if any(not 0 <= index < len(texts) for index, _ in ranked):
        raise RerankError("The rerank model answered with an index out of range.")
    return ranked
