"""The digest job in real Celery workers: on beat's schedule, twice at once, and with a
worker killed in the middle of a delivery."""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager

import pytest
from django.db import connection, connections, transaction

from agents_core.models import NotificationRecord, NotificationStatus, Run, Signal
from agents_core.signals.notifications import send_notification_signal
from tests.conftest import ROOT, celery_worker_process, child_process_env, stop_process

pytestmark = [pytest.mark.celery_worker, pytest.mark.django_db(transaction=True)]
TASK = "agents_core.tasks.notifications_digest_run"


def wait_for(predicate, what: str, timeout: float = 60.0) -> None:
    deadline = time.monotonic() + timeout
    while not predicate():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.05)


def lock_waiters() -> list[int]:
    """Backends of this database waiting for a lock (row or advisory)."""
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT pid FROM pg_stat_activity WHERE datname = current_database() "
            "AND wait_event_type = 'Lock'"
        )
        return [row[0] for row in cursor.fetchall()]


def backend_alive(pid: int) -> bool:
    with connection.cursor() as cursor:
        cursor.execute("SELECT count(*) FROM pg_stat_activity WHERE pid = %s", [pid])
        return cursor.fetchone()[0] == 1


@contextmanager
def run_row_locked(run_id) -> Iterator[None]:
    """Hold the running Run's row FOR UPDATE in another connection: a digest delivering
    into that run has claimed its records and waits here, inside its transaction."""
    locked, release = threading.Event(), threading.Event()

    def hold() -> None:
        try:
            with transaction.atomic():
                Run.objects.select_for_update().get(id=run_id)
                locked.set()
                release.wait(60)
        finally:
            connections.close_all()

    holder = threading.Thread(target=hold, daemon=True)
    holder.start()
    assert locked.wait(30)
    try:
        yield
    finally:
        release.set()
        holder.join(30)


def notify_low(thread, n: int = 3) -> list[int]:
    return [
        send_notification_signal(
            thread=thread, source="ci", summary=f"build {i}", priority="low"
        ).notification.id
        for i in range(n)
    ]


def run_digest(**options):
    from studio.celery import app

    return app.send_task(TASK, ignore_result=False, **options)


def test_beat_runs_the_digest_on_its_schedule_in_a_real_worker(celery_worker, thread):
    ids = notify_low(thread)
    with tempfile.TemporaryDirectory() as folder:
        log = open(os.path.join(folder, "beat.log"), "wb")  # noqa: SIM115
        beat = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "celery",
                "-A",
                "studio",
                "beat",
                "--loglevel=INFO",
                "-s",
                os.path.join(folder, "schedule"),
            ],
            cwd=ROOT,
            env=child_process_env(STUDIO_DIGEST_INTERVAL="1"),
            stdout=log,
            stderr=subprocess.STDOUT,
        )
        try:
            wait_for(
                lambda: (
                    not NotificationRecord.objects.filter(
                        id__in=ids, status=NotificationStatus.PENDING
                    ).exists()
                ),
                "beat's digest",
            )
        finally:
            stop_process(beat)
            log.close()
    records = NotificationRecord.objects.filter(id__in=ids)
    assert {r.status for r in records} == {NotificationStatus.DIGESTED}
    assert len({r.claim_token for r in records}) == 1
    signal = Signal.objects.get()
    assert (signal.tag_name, signal.status) == ("notifications", "persisted")
    assert signal.attributes["count"] == 3
    assert not thread.runs.exists()


def test_two_digest_jobs_running_at_once_deliver_each_record_once(
    celery_worker, thread, running_run
):
    ids = notify_low(thread)
    with celery_worker_process(), run_row_locked(running_run.id):
        first, second = run_digest(), run_digest()
        # Both jobs are inside the digest at the same time, each waiting on a lock.
        wait_for(lambda: len(lock_waiters()) >= 2, "both jobs to be in the digest")
    reports = [first.get(timeout=60), second.get(timeout=60)]
    delivered = [report["delivered"] for report in reports]
    assert sorted(delivered, key=len) == [{}, {str(thread.id): ids}]
    signal = Signal.objects.get()
    assert (signal.status, signal.run_id) == ("pending", running_run.id)
    assert set(NotificationRecord.objects.values_list("status", flat=True)) == {"digested"}


def test_a_worker_killed_mid_digest_leaves_the_records_to_the_next_job(
    celery_worker, thread, running_run
):
    ids = notify_low(thread)
    with run_row_locked(running_run.id):
        run_digest()
        wait_for(lambda: len(lock_waiters()) == 1, "the worker to be mid-delivery")
        [pid] = lock_waiters()
        celery_worker.kill()
        celery_worker.wait(30)
    # The dead worker's transaction ends with its connection: nothing it wrote stays.
    wait_for(lambda: not backend_alive(pid), "the killed worker's session to end")
    assert not Signal.objects.exists()
    assert set(NotificationRecord.objects.filter(id__in=ids).values_list("status", flat=True)) == {
        NotificationStatus.PENDING
    }
    with celery_worker_process():
        report = run_digest().get(timeout=60)
    assert report["delivered"] == {str(thread.id): ids}
    signal = Signal.objects.get()
    assert (signal.status, signal.run_id) == ("pending", running_run.id)
    assert set(NotificationRecord.objects.values_list("status", flat=True)) == {"digested"}
