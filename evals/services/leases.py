"""Leases on suite runs: one process plays a suite run at a time, and a run whose process
died is recognised by its expired lease.

- Claim: queued -> running in one conditional UPDATE that writes the process (`host:pid`),
  the attempt (attempts + 1) and the end of the lease (database time +
  STUDIO_EVAL_LEASE_SECONDS). A second delivery of the task finds the run running.
- Renewal: a thread of the playing process moves the lease forward every third of its
  length, conditional on the run still being this attempt's. A result is claimed only
  while the run is held by the attempt, so no result is played twice while its worker
  lives; a process whose renewal matches nothing stops claiming results.
- Recovery: evals/services/recovery.py takes back the runs whose lease expired.

Lease times are database times, so the workers' clocks do not matter.
"""

from __future__ import annotations

import logging
import threading
from datetime import timedelta
from typing import Any

from django.conf import settings
from django.db import DatabaseError, connection
from django.db.models import DateTimeField, ExpressionWrapper, F, Q
from django.db.models.functions import Now
from django.utils import timezone

from evals.models import SuiteRun, SuiteRunStatus

log = logging.getLogger(__name__)


def lease_end() -> ExpressionWrapper:
    length = timedelta(seconds=settings.STUDIO_EVAL_LEASE_SECONDS)
    return ExpressionWrapper(Now() + length, output_field=DateTimeField())


def lease_expired() -> Q:
    return Q(lease_expires_at__lt=Now()) | Q(lease_expires_at__isnull=True)


def suite_run_claim(*, suite_run_id: int, worker: str) -> int | None:
    """queued -> running for exactly one process; the attempt it holds, else None."""
    claimed = SuiteRun.objects.filter(pk=suite_run_id, status=SuiteRunStatus.QUEUED).update(
        status=SuiteRunStatus.RUNNING,
        started_at=timezone.now(),
        attempts=F("attempts") + 1,
        worker=worker,
        lease_expires_at=lease_end(),
    )
    if claimed != 1:
        return None
    return SuiteRun.objects.values_list("attempts", flat=True).get(pk=suite_run_id)


def held(*, suite_run_id: int, attempt: int, worker: str) -> Q:
    """The suite run is running and still held by this attempt of this process."""
    return Q(pk=suite_run_id, status=SuiteRunStatus.RUNNING, attempts=attempt, worker=worker)


def lease_renew(*, suite_run_id: int, attempt: int, worker: str) -> bool:
    rows = SuiteRun.objects.filter(held(suite_run_id=suite_run_id, attempt=attempt, worker=worker))
    return rows.update(lease_expires_at=lease_end()) == 1


class SuiteLease:
    """Renews a suite run's lease from a thread while its cases play; `lost` is set once a
    renewal finds the run taken back (its process had stalled past the lease)."""

    def __init__(self, *, suite_run_id: int, attempt: int, worker: str) -> None:
        self.key: dict[str, Any] = {
            "suite_run_id": suite_run_id,
            "attempt": attempt,
            "worker": worker,
        }
        self.lost = threading.Event()
        self._stop = threading.Event()
        self._thread = threading.Thread(
            target=self._keep, name=f"suite-run-lease-{suite_run_id}", daemon=True
        )

    def __enter__(self) -> SuiteLease:
        self._thread.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        self._stop.set()
        self._thread.join()

    def _keep(self) -> None:
        try:
            while not self._stop.wait(settings.STUDIO_EVAL_LEASE_SECONDS / 3):
                try:
                    if not lease_renew(**self.key):
                        log.warning("Suite run %s was taken back from this process", self.key)
                        self.lost.set()
                        return
                except DatabaseError:
                    log.warning("Could not renew the lease of %s", self.key, exc_info=True)
                    connection.close()
        finally:
            connection.close()  # this thread's own connection
