"""Fixtures for the signals tests: a studio agent of `owner`, its thread, a running run."""

from __future__ import annotations

import pytest

from agents_core.models import Run, RunStatus, Thread
from tests.agents_core.factories import AgentFactory

# The run-loop fixtures (code definitions synced, a thread of a code agent).
from tests.agents_core.runtime.conftest import make_thread, synced  # noqa: F401, E402


@pytest.fixture
def agent(owner):
    return AgentFactory(owner=owner, slug="helper", name="Helper")


@pytest.fixture
def thread(agent, owner):
    return Thread.objects.create(agent=agent, owner=owner, resource_id=str(owner.pk), title="T")


def make_running_run(thread: Thread) -> Run:
    """A run in status `running`: the thread is active until it ends."""
    return Run.objects.create(
        thread=thread, agent=thread.agent, status=RunStatus.RUNNING, started_by=thread.owner
    )


@pytest.fixture
def running_run(thread) -> Run:
    return make_running_run(thread)
