"""Fixtures of the run-loop tests: code definitions synced, no offline delay, helpers
that start a run and wait for it (runs execute as tasks on the test's event loop)."""

from __future__ import annotations

from typing import Any

import pytest
from channels.db import database_sync_to_async


@pytest.fixture
def synced(transactional_db, settings):
    """Code agents and tools in the database (a transactional test flushes them)."""
    from agents_core.registry import definitions_sync, discover, reset_registry
    from tests.agents_core.runtime import definitions

    settings.STUDIO_OFFLINE_DELAY = 0.0
    settings.STUDIO_STREAM_BATCH_MS = 5
    registry = discover()
    registry.collect_module(definitions)
    reset_registry(registry)
    definitions_sync(registry=registry)
    yield
    reset_registry()


@pytest.fixture
def make_thread(synced, owner):
    from agents_core.models import Agent
    from agents_core.services.threads import thread_create

    def make(slug: str = "weather-assistant", user: Any = None) -> Any:
        return thread_create(user=user or owner, agent=Agent.objects.get(slug=slug))

    return make


async def start(thread: Any, text: str, user: Any, options: dict | None = None) -> Any:
    from agents_core.services.runs import run_start_safe

    return await database_sync_to_async(run_start_safe)(
        thread=thread, message=text, user=user, options=options or {}
    )


async def settle() -> None:
    from agents_core.runtime.execution.active import wait_idle

    await wait_idle(60)


def events_of(thread: Any, after: int = 0) -> list[dict]:
    from agents_core.services.threads import thread_events_after

    return thread_events_after(thread_id=thread.pk, after=after)


async def run_to_end(
    thread: Any,
    text: str,
    user: Any,
    options: dict | None = None,
) -> tuple[Any, list[dict]]:
    """Start a run, wait for it to end (or suspend); (run, events of this run)."""
    run = await start(thread, text, user, options)
    await settle()
    events = await database_sync_to_async(events_of)(thread)
    await database_sync_to_async(run.refresh_from_db)()
    return run, [e for e in events if e.get("runId") == str(run.pk)]


def types(events: list[dict]) -> list[str]:
    return [event["type"] for event in events]


def squeeze(names: list[str]) -> list[str]:
    """Event types with repeats collapsed (deltas come in batches of any size)."""
    out: list[str] = []
    for name in names:
        if not out or out[-1] != name:
            out.append(name)
    return out
