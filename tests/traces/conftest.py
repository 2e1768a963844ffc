"""Helpers of the trace tests: a run's trace through the API, its spans by kind."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from channels.db import database_sync_to_async

# The run-loop tests' fixtures: code definitions synced, threads of their agents.
from tests.agents_core.runtime.conftest import make_thread, synced  # noqa: F401

# A local OpenAI-compatible server that keeps the requests it received.
from tests.agents_core.runtime.test_openai_compatible import fake_openai  # noqa: F401


async def trace_of(client: Any, run: Any) -> list[dict[str, Any]]:
    response = await database_sync_to_async(client.get)(f"/api/runs/{run.pk}/trace")
    assert response.status_code == 200, response.content
    return response.json()["spans"]


def of_kind(spans: list[dict[str, Any]], kind: str) -> list[dict[str, Any]]:
    return [span for span in spans if span["kind"] == kind]


def when(value: str) -> datetime:
    return datetime.fromisoformat(value)


def assert_nested(spans: list[dict[str, Any]]) -> None:
    """One root; every other span's parent is in the trace, and a closed span lies
    within its closed parent."""
    by_id = {span["id"]: span for span in spans}
    assert [span["kind"] for span in spans if span["parent"] is None] == ["run"]
    assert len({span["traceId"] for span in spans}) == 1
    for span in spans:
        if span["parent"] is None:
            continue
        parent = by_id[span["parent"]]
        assert when(parent["start"]) <= when(span["start"]), (span, parent)
        if span["end"] and parent["end"]:
            assert when(span["end"]) <= when(parent["end"]), (span, parent)
