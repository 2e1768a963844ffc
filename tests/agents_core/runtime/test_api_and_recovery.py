"""agent_generate (the "agent as tool" entry point) and a run orphaned by a dead process."""

from __future__ import annotations

from datetime import timedelta

import pytest
from channels.db import database_sync_to_async
from django.utils import timezone

from agents_core.models import Agent, Run, Thread
from agents_core.runtime.api import agent_generate
from agents_core.services.runs import run_start_safe
from studio.exceptions import Conflict
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
