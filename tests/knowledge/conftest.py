"""Fixtures of the knowledge tests: bases whose chunk tables are dropped afterwards."""

from __future__ import annotations

import pytest

from knowledge.models import KnowledgeBase
from knowledge.services.bases import kb_create
from knowledge.store import get_store


@pytest.fixture
def make_kb(db):
    made: list[KnowledgeBase] = []

    def make(owner, slug: str = "docs", *, embedding_model: str = "", **extra) -> KnowledgeBase:
        kb = kb_create(owner=owner, name=slug, slug=slug, embedding_model=embedding_model, **extra)
        made.append(kb)
        return kb

    yield make
    for kb in made:
        get_store().drop(table=kb.table_name)


@pytest.fixture
def fts_kb(make_kb, owner) -> KnowledgeBase:
    """A full-text-only base of `owner` (no embedding model: fast)."""
    return make_kb(owner, "docs")
