"""`manage.py execute_runs --check --name NAME`: the run workers' liveness probe
(deploy/kubernetes) succeeds while the named worker beats and fails once the live
workers would take it as dead."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.core.management import CommandError, call_command
from django.utils import timezone

from agents_core.models import RunWorkerBeat

pytestmark = pytest.mark.django_db


def beat(name: str, *, seconds_ago: float) -> None:
    at = timezone.now() - timedelta(seconds=seconds_ago)
    RunWorkerBeat.objects.create(name=name, started_at=at, beat_at=at)


def test_it_succeeds_while_the_worker_beats(capsys):
    beat("studio-runs-abc", seconds_ago=5)
    call_command("execute_runs", "--check", "--name", "studio-runs-abc")
    assert "studio-runs-abc is alive" in capsys.readouterr().out


def test_it_fails_once_the_beat_is_older_than_the_dead_bound(settings):
    settings.STUDIO_RUN_WORKER_DEAD_SECONDS = 30
    settings.STUDIO_RUN_WORKER_POLL_SECONDS = 10
    beat("studio-runs-abc", seconds_ago=31)
    with pytest.raises(CommandError, match="has not beaten for 30 s"):
        call_command("execute_runs", "--check", "--name", "studio-runs-abc")


def test_the_bound_is_never_less_than_three_polls(settings):
    settings.STUDIO_RUN_WORKER_DEAD_SECONDS = 5
    settings.STUDIO_RUN_WORKER_POLL_SECONDS = 10
    beat("studio-runs-abc", seconds_ago=20)
    call_command("execute_runs", "--check", "--name", "studio-runs-abc")


def test_it_fails_for_a_worker_that_never_beat_or_no_name():
    beat("studio-runs-other", seconds_ago=1)
    with pytest.raises(CommandError, match="has not beaten"):
        call_command("execute_runs", "--check", "--name", "studio-runs-abc")
    with pytest.raises(CommandError, match="needs the --name"):
        call_command("execute_runs", "--check")
