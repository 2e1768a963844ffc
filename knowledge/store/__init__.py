"""The chunk store: one small interface (knowledge.store.base.ChunkStore) in front of
the storage engine.

Every read and write of chunks goes through `get_store()`; the engine behind it is
LanceDB (knowledge.store.lance), embedded on a local directory or on object storage
(settings.STUDIO_KNOWLEDGE_URI), with the same code either way.
"""

from __future__ import annotations

from functools import cache

from django.conf import settings

from knowledge.store.base import Chunk, ChunkStore, Filters, Hit

__all__ = ["Chunk", "ChunkStore", "Filters", "Hit", "get_store"]


@cache
def get_store() -> ChunkStore:
    """The process's store (a LanceDB connection is reused by every call).

    The engine is imported here, on first use, not with the URLconf: loading lancedb and
    pyarrow takes seconds, and most requests of a process never touch a knowledge base.
    """
    from knowledge.store.lance import LanceStore

    return LanceStore(settings.STUDIO_KNOWLEDGE_URI)
