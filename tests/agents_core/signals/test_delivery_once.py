"""A notification merged into a pending inbox record is delivered once, whatever a digest
job does at the same time.

The interleaving is forced, not hoped for: the sender pauses at its policy decision (after
it merged into the pending record) while a digest runs on a second connection. The test
lets the sender go on only once that digest has either committed or is blocked behind the
sender's lock (seen in PostgreSQL's pg_stat_activity), so both orders are covered and the
run does not depend on timing.
"""

from __future__ import annotations

import threading
import time

import pytest
from django.db import connection, connections

from agents_core.models import NotificationRecord, NotificationStatus, Signal
from agents_core.signals import notifications
from agents_core.signals.digest import notifications_digest
from agents_core.signals.notifications import send_notification_signal

pytestmark = pytest.mark.django_db(transaction=True)

BOUND = 30.0  # seconds: a bound on the test, never an assertion on speed


def deliveries(record_id: int) -> list[Signal]:
    """Every signal that carried the record to the thread: its own, or a digest's."""
    direct = Signal.objects.filter(notification_id=record_id)
    digested = Signal.objects.filter(metadata__notificationIds__contains=[record_id])
    return list(direct) + list(digested)


def backend_waits_on_a_lock(pid: int) -> bool:
    with connection.cursor() as cursor:
        cursor.execute("SELECT wait_event_type FROM pg_stat_activity WHERE pid = %s", [pid])
        row = cursor.fetchone()
    return row is not None and row[0] == "Lock"


def run_interleaved(monkeypatch, send) -> list:  # noqa: ANN001
    """Run `send()` in one thread and a digest in another, the digest starting while the
    sender is inside its policy decision. Returns the digest reports."""
    paused, resume = threading.Event(), threading.Event()
    digest_pid: list[int] = []
    digest_done = threading.Event()
    reports, errors = [], []
    real_decide = notifications.policy_decide

    def decide_after_the_digest(**kwargs):  # noqa: ANN003, ANN202
        if threading.current_thread().name == "sender" and not paused.is_set():
            paused.set()
            assert resume.wait(BOUND), "the test never let the sender go on"
        return real_decide(**kwargs)

    monkeypatch.setattr(notifications, "policy_decide", decide_after_the_digest)

    def sender() -> None:
        try:
            send()
        except BaseException as exc:  # noqa: BLE001 - reported by the main thread
            errors.append(exc)
        finally:
            connections.close_all()

    def digest() -> None:
        try:
            with connection.cursor() as cursor:
                cursor.execute("SELECT pg_backend_pid()")
                digest_pid.append(cursor.fetchone()[0])
            reports.append(notifications_digest())
        except BaseException as exc:  # noqa: BLE001
            errors.append(exc)
        finally:
            digest_done.set()
            connections.close_all()

    threads = [threading.Thread(target=sender, name="sender")]
    threads[0].start()
    assert paused.wait(BOUND), "the sender never reached its policy decision"
    threads.append(threading.Thread(target=digest, name="digest"))
    threads[1].start()
    deadline = time.monotonic() + BOUND
    while not digest_done.is_set():
        if digest_pid and backend_waits_on_a_lock(digest_pid[0]):
            break  # the digest waits for the sender's transaction: let the sender finish
        assert time.monotonic() < deadline, "the digest neither finished nor blocked"
        time.sleep(0.02)
    resume.set()
    for thread in threads:
        thread.join(BOUND)
    assert not any(thread.is_alive() for thread in threads)
    assert not errors, errors
    return reports


def low(thread, summary: str):  # noqa: ANN001, ANN201
    return send_notification_signal(
        thread=thread, source="ci", summary=summary, priority="low", dedupe_key="build"
    )


def test_a_digest_between_the_merge_and_the_decision_does_not_deliver_twice(
    thread, running_run, monkeypatch
):
    record_id = low(thread, "build 7 failed").notification.id

    run_interleaved(monkeypatch, lambda: low(thread, "build 7 failed again"))
    notifications_digest()  # whatever is still pending now goes out

    delivered = deliveries(record_id)
    assert len(delivered) == 1, [s.contents for s in delivered]
    # The merge is not lost either: what went out is the merged record.
    assert "build 7 failed again" in delivered[0].contents
    record = NotificationRecord.objects.get(id=record_id)
    assert record.status == NotificationStatus.DIGESTED
    assert NotificationRecord.objects.count() == 1


def test_a_merge_that_raises_the_priority_is_delivered_once_with_a_digest_in_between(
    thread, running_run, monkeypatch
):
    record_id = low(thread, "disk at 80%").notification.id

    def urgent():  # noqa: ANN202
        return send_notification_signal(
            thread=thread, source="ci", summary="disk at 99%", priority="urgent", dedupe_key="build"
        )

    run_interleaved(monkeypatch, urgent)
    notifications_digest()

    delivered = deliveries(record_id)
    assert len(delivered) == 1, [s.contents for s in delivered]
    assert "disk at 99%" in delivered[0].contents
    assert delivered[0].run_id == running_run.id
