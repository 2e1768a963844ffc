"""Retention: beat's job deletes the traces whose run started before the retention period,
in batches, and nothing newer."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone

from traces.models import Span
from traces.recorder import span_id_for
from traces.services import traces_delete_expired
from traces.tasks import traces_delete_expired_task

pytestmark = pytest.mark.django_db


def trace(owner, *, days_ago: float, children: int = 3):
    """A run's trace started `days_ago`: its run span and `children` spans under it."""
    from agents_core.models import Agent, Run
    from agents_core.services.threads import thread_create

    agent = Agent.objects.get_or_create(
        slug="kept", defaults={"name": "Kept", "model": "studio/scripted", "owner": owner}
    )[0]
    run = Run.objects.create(thread=thread_create(user=owner, agent=agent), agent=agent)
    start = timezone.now() - timedelta(days=days_ago)
    root = Span.objects.create(
        span_id=span_id_for(str(run.pk), "run"),
        trace_id=run.pk,
        run=run,
        kind="run",
        name="kept",
        start=start,
    )
    for i in range(children):
        Span.objects.create(
            span_id=span_id_for(str(run.pk), str(i)),
            trace_id=run.pk,
            parent_id=root.span_id,
            run=run,
            kind="model",
            name="m",
            # A long run: its last spans are younger than the cutoff, and go with it.
            start=start + timedelta(days=i),
        )
    return run


def spans_of(run) -> int:
    return Span.objects.filter(trace_id=run.pk).count()


def test_it_deletes_old_traces_whole_in_batches_and_keeps_the_rest(owner, settings):
    settings.STUDIO_TRACE_RETENTION_DAYS = 30
    old = [trace(owner, days_ago=31 + i, children=4) for i in range(3)]
    young = trace(owner, days_ago=29)
    assert traces_delete_expired(batch=2) == 15
    assert [spans_of(run) for run in old] == [0, 0, 0]
    assert spans_of(young) == 4


def test_the_task_deletes_once_and_a_second_pass_finds_nothing(owner, settings):
    settings.STUDIO_TRACE_RETENTION_DAYS = 7
    old, young = trace(owner, days_ago=8), trace(owner, days_ago=6)
    assert traces_delete_expired_task() == 4
    assert traces_delete_expired_task() == 0
    assert (spans_of(old), spans_of(young)) == (0, 4)
