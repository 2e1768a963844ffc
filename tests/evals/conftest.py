"""Fixtures of the evals tests: code definitions synced (the demo agent travel-desk),
the demo suite imported for the owner, and a wait for a suite run to finish."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import pytest

DEMO = Path(__file__).resolve().parents[2] / "evals" / "demo" / "travel_desk.json"


@pytest.fixture
def synced(transactional_db, settings):
    from agents_core.registry import definitions_sync, discover, reset_registry

    settings.STUDIO_OFFLINE_DELAY = 0.0
    registry = discover()
    reset_registry(registry)
    definitions_sync(registry=registry)
    yield
    reset_registry()


@pytest.fixture
def demo(synced, owner) -> Any:
    """The demo suite of travel-desk, imported for `owner`."""
    from agents_core.models import Agent
    from evals.models import Suite
    from evals.services.cases import cases_import

    agent = Agent.objects.get(slug="travel-desk")
    cases_import(agent=agent, owner=owner, data=json.loads(DEMO.read_text()))
    return Suite.objects.get(owner=owner, slug="travel-desk-demo")


def wait_finished(suite_run: Any, seconds: float = 240) -> Any:
    """Poll until the suite run is passed or failed (a bound, not a timed assertion)."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        suite_run.refresh_from_db()
        if suite_run.status in ("passed", "failed"):
            return suite_run
        time.sleep(0.2)
    raise TimeoutError(f"suite run {suite_run.pk} still {suite_run.status}")


def free_port_url() -> str:
    """A base URL on 127.0.0.1 where nothing listens."""
    from tests.conftest import free_port

    return f"http://127.0.0.1:{free_port()}"
