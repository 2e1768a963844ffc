"""Celery tasks of knowledge: thin wrappers, the logic lives in knowledge.services.ingest."""

from __future__ import annotations

from celery import shared_task
from django.db import InterfaceError, OperationalError

from knowledge.queue import INGEST_TASK
from knowledge.services import ingest


# Retried only for a database that is briefly unreachable; a document's own failure is
# its failed status, and a dead worker is handled by the sweep (the claim's heartbeat).
@shared_task(
    name=INGEST_TASK,
    bind=True,
    acks_late=True,
    reject_on_worker_lost=True,
    autoretry_for=(OperationalError, InterfaceError),
    retry_backoff=True,
    max_retries=3,
)
def document_ingest_task(self, document_id: int) -> None:  # noqa: ANN001
    ingest.document_ingest(document_id=document_id)


@shared_task(name="knowledge.documents_sweep")
def documents_sweep_task() -> None:
    ingest.documents_sweep()
