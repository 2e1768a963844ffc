"""Queue work for the Celery worker by task name (knowledge.tasks registers the names),
so that services need not import the tasks module that imports them."""

from __future__ import annotations

from django.db import transaction

from studio.celery import app

INGEST_TASK = "knowledge.document_ingest"


def ingest_after_commit(document_id: int) -> None:
    transaction.on_commit(lambda: app.send_task(INGEST_TASK, args=[document_id]))
