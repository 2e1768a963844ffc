"""Large imports as Celery jobs, with progress.

`POST /api/agents/import` with a document of STUDIO_IMPORT_ASYNC_ITEMS agents and tools or
more makes an ImportJob and answers 202; a worker runs the same `agent_import` (one
transaction, all or nothing) and records its progress, its result (what the synchronous
import answers) or its error (the same body and status the synchronous import gives).
Smaller documents are imported inside the request, as before.
"""

from __future__ import annotations

import logging
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from django.conf import settings
from django.core.exceptions import ValidationError
from django.db import connection, transaction
from django.utils import timezone

from agents_core.models import ImportJob, ImportJobStatus
from agents_core.services.agent_io import agent_import, import_size
from common.exceptions import ApplicationError
from studio.celery import app as celery_app

logger = logging.getLogger(__name__)
# The Celery task, by name (agents_core.tasks imports this module).
IMPORT_TASK = "agents_core.tasks.agent_import_job_run"


def import_runs_async(*, document: Any) -> bool:
    """Whether this document is large enough to be imported by a worker."""
    return import_size(document) >= settings.STUDIO_IMPORT_ASYNC_ITEMS


@transaction.atomic
def import_job_create(
    *, owner: Any, document: Any, renames: dict[str, Any], dry_run: bool
) -> ImportJob:
    job = ImportJob.objects.create(
        owner=owner,
        request={"document": document, "renames": renames, "dry_run": dry_run},
        total=import_size(document),
    )
    transaction.on_commit(lambda: celery_app.send_task(IMPORT_TASK, args=[str(job.id)]))
    return job


class _Progress:
    """Writes `done` from a thread of its own, so with a database connection of its own:
    the import's transaction is still open, and the owner reads the count meanwhile.
    About a hundred writes per job, whatever its size."""

    def __init__(self, job: ImportJob) -> None:
        self.job_id = job.id
        self.step = max(1, job.total // 100)
        self.written = 0
        self.thread = ThreadPoolExecutor(max_workers=1, thread_name_prefix="import-progress")

    def __call__(self, done: int) -> None:
        if done - self.written >= self.step:
            self.written = done
            self.thread.submit(self._write, done)

    def _write(self, done: int) -> None:
        ImportJob.objects.filter(pk=self.job_id, done__lt=done).update(done=done)

    def close(self) -> None:
        self.thread.submit(connection.close)  # this thread's own connection
        self.thread.shutdown(wait=True)


def _error_body(exc: ApplicationError | ValidationError) -> tuple[dict[str, Any], int]:
    """The body and status the synchronous import answers for this error."""
    if isinstance(exc, ApplicationError):
        return {"detail": exc.message, "code": exc.code, **exc.extra}, exc.status_code
    errors = exc.message_dict if hasattr(exc, "error_dict") else {"detail": exc.messages}
    return {"detail": "Invalid.", "code": "invalid", **errors}, 400


def import_job_execute(*, job_id: str) -> None:
    """Run a pending job once: a second delivery of the task finds it claimed."""
    claimed = ImportJob.objects.filter(pk=job_id, status=ImportJobStatus.PENDING).update(
        status=ImportJobStatus.RUNNING
    )
    if claimed != 1:
        return
    job = ImportJob.objects.select_related("owner").get(pk=job_id)
    progress = _Progress(job)
    fields: dict[str, Any] = {"request": {}}  # the document is not needed any more
    try:
        plan = agent_import(owner=job.owner, progress=progress, **job.request)
        fields.update(status=ImportJobStatus.COMPLETED, result=plan, done=job.total)
    except (ApplicationError, ValidationError) as exc:
        body, status = _error_body(exc)
        fields.update(status=ImportJobStatus.FAILED, error=body, error_status=status)
    except Exception:
        logger.exception("Import job %s failed", job_id)
        body = {"detail": "The import failed (the error was logged).", "code": "internal"}
        fields.update(status=ImportJobStatus.FAILED, error=body, error_status=500)
    finally:
        progress.close()
    fields["finished_at"] = timezone.now()
    ImportJob.objects.filter(pk=job_id).update(**fields)
