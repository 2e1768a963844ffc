"""Leases on async tool runs: one process executes a run at a time, and a run whose
process died is recognised by its expired lease, without beat.

- Claim: pending -> running in one conditional UPDATE that also writes the claiming
  process (`host:pid`), the attempt number (attempts + 1) and the end of the lease
  (database time + STUDIO_TOOL_RUN_LEASE_SECONDS). A second delivery of the same task
  finds the run running and does nothing.
- Renewal: while the tool runs, a thread of the executing process moves the end of the
  lease forward every third of the lease, with an UPDATE conditional on the run still
  being this attempt, held by this process. When it matches nothing (the run was taken
  back after its lease expired), or the database has been unreachable for longer than
  the lease minus one renewal, the holder aborts its tool: it can no longer prove the
  run is its own, and its result would not be recorded anyway (completion is
  conditional on the attempt).
- Expiry: `expired_runs()` are the running runs whose lease ended; the services in
  tools_app.services.runs put them back in the queue or fail them.

Lease times are database times (`now()`), so the workers' clocks do not matter.
"""

from __future__ import annotations

import logging
import os
import socket
import threading
import time
from collections.abc import Callable
from datetime import timedelta
from typing import Any

from django.conf import settings
from django.db import DatabaseError, connection
from django.db.models import DateTimeField, ExpressionWrapper, F, Q, QuerySet
from django.db.models.functions import Now

from tools_app.models import ExecutionMode, ToolRun, ToolRunStatus

logger = logging.getLogger(__name__)


def worker_name() -> str:
    """The process that holds a lease, as shown on the run (`host:pid`)."""
    return f"{socket.gethostname()}:{os.getpid()}"


def lease_end() -> ExpressionWrapper:
    """The database's now() plus the lease length, as an expression for an UPDATE."""
    length = timedelta(seconds=settings.STUDIO_TOOL_RUN_LEASE_SECONDS)
    return ExpressionWrapper(Now() + length, output_field=DateTimeField())


def lease_expired() -> Q:
    """A running async run whose lease ended (or that never had one)."""
    return Q(lease_expires_at__lt=Now()) | Q(lease_expires_at__isnull=True)


def expired_runs() -> QuerySet[ToolRun]:
    return ToolRun.objects.filter(
        lease_expired(), status=ToolRunStatus.RUNNING, mode=ExecutionMode.ASYNC
    )


def tool_run_claim(*, run_id: Any, worker: str) -> ToolRun | None:
    """pending -> running for exactly one process; None when someone got there first."""
    claimed = ToolRun.objects.filter(id=run_id, status=ToolRunStatus.PENDING).update(
        status=ToolRunStatus.RUNNING,
        attempts=F("attempts") + 1,
        started_at=Now(),
        worker=worker,
        lease_expires_at=lease_end(),
    )
    if claimed != 1:
        return None
    return ToolRun.objects.select_related("tool", "created_by").get(id=run_id)


def lease_renew(*, run_id: Any, attempt: int, worker: str) -> bool:
    """Move the end of the lease forward; False when the run is no longer ours."""
    return (
        ToolRun.objects.filter(
            id=run_id, status=ToolRunStatus.RUNNING, attempts=attempt, worker=worker
        ).update(lease_expires_at=lease_end())
        == 1
    )


class LeaseKeeper:
    """Renews the lease of one claimed run from a thread of its own while the tool runs
    (a thread, so that a tool that keeps the event loop busy does not stop it), and calls
    `on_lost(reason)` once if the lease is lost."""

    def __init__(
        self, *, run_id: Any, attempt: int, worker: str, on_lost: Callable[[str], Any]
    ) -> None:
        self.run_id, self.attempt, self.worker = run_id, attempt, worker
        self.on_lost = on_lost
        self.lost = ""
        self._stop = threading.Event()
        self._thread = threading.Thread(
            target=self._keep, name=f"tool-run-lease-{run_id}", daemon=True
        )

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()

    def _keep(self) -> None:
        lease = settings.STUDIO_TOOL_RUN_LEASE_SECONDS
        every = lease / 3
        renewed = time.monotonic()
        try:
            while not self._stop.wait(every):
                reason = self._renew_once(
                    silent_for=time.monotonic() - renewed, limit=lease - every
                )
                if reason is None:
                    renewed = time.monotonic()
                elif reason:
                    self.lost = reason
                    self.on_lost(reason)
                    return
        finally:
            connection.close()  # this thread's own connection

    def _renew_once(self, *, silent_for: float, limit: float) -> str | None:
        """None: renewed; "": not renewed this time, still ours; else why it is lost."""
        try:
            if lease_renew(run_id=self.run_id, attempt=self.attempt, worker=self.worker):
                return None
        except DatabaseError as exc:
            logger.warning("Could not renew the lease of tool run %s: %s", self.run_id, exc)
            connection.close()
            if silent_for < limit:
                return ""
            return f"the lease could not be renewed for {silent_for:.0f} s ({exc})"
        if self._stop.is_set():
            return ""  # finished meanwhile: the completion cleared the lease
        return "the run was taken back (its lease had expired)"
