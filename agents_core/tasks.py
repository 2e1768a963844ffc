"""Celery tasks of agents_core. Tasks are thin: all logic lives in services."""

from __future__ import annotations

from celery import shared_task
from django.db import InterfaceError, OperationalError

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
