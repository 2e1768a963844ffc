"""Celery tasks of agents_core. Tasks are thin: all logic lives in services."""

from __future__ import annotations

from celery import shared_task
from django.db import InterfaceError, OperationalError

from agents_core.services.import_jobs import IMPORT_TASK, import_job_execute
from agents_core.services.thread_titles import TITLE_TASK, thread_title_generate
from agents_core.signals.digest import notifications_digest


@shared_task(
    bind=True,
    autoretry_for=(OperationalError, InterfaceError),
    retry_backoff=True,
    max_retries=3,
    acks_late=True,
)
def notifications_digest_run(self) -> dict:
    """Beat runs this; a second copy at the same time finds the rows claimed and skips."""
    report = notifications_digest(token=self.request.id)
    return {"delivered": report.delivered, "failed": report.failed}


@shared_task(name=TITLE_TASK, acks_late=True)
def thread_title_generate_task(run_id: str) -> None:
    """Title a thread from its first exchange; a second copy finds the title claimed."""
    thread_title_generate(run_id=run_id)


@shared_task(name=IMPORT_TASK, acks_late=True)
def agent_import_job_run(job_id: str) -> None:
    """A large import (services/import_jobs.py); a second copy finds the job claimed."""
    import_job_execute(job_id=job_id)
