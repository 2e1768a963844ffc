"""agent_generate (the "agent as tool" entry point) and a run orphaned by a dead process."""

from __future__ import annotations

from datetime import timedelta

import pytest
from channels.db import database_sync_to_async
from django.utils import timezone

from agents_core.models import Agent, Run, Thread
from agents_core.runtime.execution.api import agent_generate
from agents_core.services.runs import run_start_safe
from common.exceptions import Conflict
from tests.agents_core.runtime.conftest import events_of, settle

pytestmark = pytest.mark.django_db(transaction=True)


async def test_agent_generate_runs_an_agent_to_its_answer(synced, owner):
    agent = await database_sync_to_async(Agent.objects.get)(slug="weather-assistant")
    text = await agent_generate(agent=agent, prompt="use weather_lookup for Sydney", user=owner)
    assert "sunny" in text
    thread = await database_sync_to_async(Thread.objects.get)(agent=agent)
    assert thread.metadata == {"generatedBy": "agent_generate"}


def test_a_run_orphaned_by_a_dead_process_does_not_block_its_thread(make_thread, owner):
    thread = make_thread()
    orphan = Run.objects.create(thread=thread, agent=thread.agent, started_by=owner)
    with pytest.raises(Conflict):
        run_start_safe(thread=thread, message="hello", user=owner)
    Run.objects.filter(pk=orphan.pk).update(created_at=timezone.now() - timedelta(hours=1))
    run = run_start_safe(thread=thread, message="hello", user=owner)
    orphan.refresh_from_db()
    assert orphan.status == "failed" and "interrupted" in orphan.error
    assert events_of(thread)[0]["type"] == "run-error"
    from asgiref.sync import async_to_sync

    async_to_sync(settle)()
    run.refresh_from_db()
    assert run.status == "completed"


def _inline_run(thread, owner, *, process: str, silent_for: float, beat_age: float | None):
    from agents_core.models import RunWorkerBeat

    now = timezone.now()
    if beat_age is not None:
        RunWorkerBeat.objects.create(
            name=process, started_at=now, beat_at=now - timedelta(seconds=beat_age)
        )
    run = Run.objects.create(thread=thread, agent=thread.agent, started_by=owner, worker=process)
    Run.objects.filter(pk=run.pk).update(created_at=now - timedelta(seconds=silent_for))
    return run


@pytest.mark.parametrize("beat_age", [None, 120])
def test_a_run_of_a_web_process_that_died_is_ended_at_the_next_message(
    make_thread, owner, settings, beat_age
):
    """A restart mid-run: the run's process stopped beating, so the next message ends it
    at once instead of after the ten minutes a run of unknown origin gets."""
    settings.STUDIO_RUN_WORKER_DEAD_SECONDS = 30
    thread = make_thread()
    orphan = _inline_run(thread, owner, process="web:gone:1:abc", silent_for=60, beat_age=beat_age)
    run = run_start_safe(thread=thread, message="use weather_lookup for Oslo", user=owner)
    orphan.refresh_from_db()
    assert orphan.status == "failed" and "interrupted" in orphan.error
    from asgiref.sync import async_to_sync

    async_to_sync(settle)()
    run.refresh_from_db()
    assert run.status == "completed"


@pytest.mark.parametrize(("silent_for", "beat_age"), [(60, 1), (5, 120)])
def test_a_run_whose_process_beats_or_that_just_spoke_is_left_alone(
    make_thread, owner, settings, silent_for, beat_age
):
    settings.STUDIO_RUN_WORKER_DEAD_SECONDS = 30
    thread = make_thread()
    live = _inline_run(
        thread, owner, process="web:alive:2:def", silent_for=silent_for, beat_age=beat_age
    )
    with pytest.raises(Conflict):
        run_start_safe(thread=thread, message="hello", user=owner)
    live.refresh_from_db()
    assert live.status == "running"


async def test_a_process_running_runs_inline_names_itself_on_them_and_beats(make_thread, owner):
    from agents_core.models import RunWorkerBeat
    from agents_core.runtime.execution.processes import process_name
    from tests.agents_core.runtime.conftest import run_to_end

    thread = await database_sync_to_async(make_thread)()
    run, _ = await run_to_end(thread, "use weather_lookup for Lima", owner)
    assert run.worker == process_name() and run.worker.startswith("web:")
    beat = await database_sync_to_async(RunWorkerBeat.objects.get)(name=run.worker)
    assert beat.beat_at >= run.created_at
