"""Signals reach a running run whatever else holds its thread's or its run's row.

While a run streams, other transactions hold its rows: the event store locks the thread's
row to number events, and every row added that references the run or the thread (an
event, a message, a span) takes a key-share lock on it until its transaction commits. The
drain before a model call and a sender's delivery must not be kept out by those: a drain
that skipped the signal because the thread row was locked left it to the run's end, which
woke a second run with it instead of giving it to the running one.

Each lock is held by a second connection for the whole of the check, so the outcome does
not depend on timing; `lock_timeout` bounds a wait that should not happen.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager

import pytest
from django.db import connection, connections

from agents_core.models import Run, Signal, SignalStatus, Thread
from agents_core.signals.delivery import signals_drain_for_run
from agents_core.signals.services import send_message

pytestmark = pytest.mark.django_db(transaction=True)

BOUND = 30.0  # seconds: a bound on the test, never an assertion on speed


@contextmanager
def held(sql: str, params: list) -> Iterator[None]:
    """Run `sql` (a locking SELECT) in a transaction on another connection and keep that
    transaction open until the block ends."""
    locked, release = threading.Event(), threading.Event()
    errors: list[BaseException] = []

    def holder() -> None:
        try:
            with connections["default"].cursor() as cursor:
                cursor.execute("BEGIN")
                cursor.execute(sql, params)
                locked.set()
                release.wait(BOUND)
                cursor.execute("ROLLBACK")
        except BaseException as exc:  # noqa: BLE001 - handed to the test below
            errors.append(exc)
            locked.set()
        finally:
            connections["default"].close()

    worker = threading.Thread(target=holder)
    worker.start()
    assert locked.wait(BOUND), "the second connection never took its lock"
    assert not errors, errors
    try:
        yield
    finally:
        release.set()
        worker.join(BOUND)


@contextmanager
def no_waiting() -> Iterator[None]:
    """Fail (instead of hanging) if this connection waits on a lock."""
    with connection.cursor() as cursor:
        cursor.execute("SET lock_timeout = '10s'")
    try:
        yield
    finally:
        with connection.cursor() as cursor:
            cursor.execute("SET lock_timeout = 0")


def in_thread(fn: Callable[[], object]) -> tuple[threading.Thread, int]:
    """Start `fn` in a thread with its own connection; returns the thread and the
    connection's backend pid (once connected)."""
    pids: list[int] = []
    connected = threading.Event()

    def target() -> None:
        try:
            conn = connections["default"]
            conn.ensure_connection()
            pids.append(conn.connection.info.backend_pid)
            connected.set()
            fn()
        finally:
            connected.set()
            connections["default"].close()

    worker = threading.Thread(target=target)
    worker.start()
    assert connected.wait(BOUND) and pids, "the thread never connected"
    return worker, pids[0]


def backend_waits_on_a_lock(pid: int) -> bool:
    with connection.cursor() as cursor:
        cursor.execute("SELECT wait_event_type FROM pg_stat_activity WHERE pid = %s", [pid])
        row = cursor.fetchone()
    return row is not None and row[0] == "Lock"


def table(model: type) -> str:
    return model._meta.db_table


def test_the_drain_takes_a_pending_signal_while_the_event_store_holds_the_thread_row(
    thread, running_run
):
    result = send_message(thread=thread, message="also check Oslo")
    assert (result.decision, result.run_id) == ("deliver", running_run.id)
    drained: list = []
    # What the event store holds while it numbers a batch of the thread's events.
    numbering = f"UPDATE {table(Thread)} SET last_seq = last_seq + 1 WHERE id = %s RETURNING 1"
    with held(numbering, [thread.pk]):
        # The drain runs on a connection of its own; once it has committed, the `signal`
        # event it publishes is numbered in the thread and waits for the row: the holder
        # lets go when the drain has either returned or is waiting there.
        drainer, pid = in_thread(lambda: drained.extend(signals_drain_for_run(running_run)))
        deadline = time.monotonic() + BOUND
        while drainer.is_alive() and not backend_waits_on_a_lock(pid):
            assert time.monotonic() < deadline, "the drain neither returned nor waited"
            time.sleep(0.02)
    drainer.join(BOUND)
    assert drained == ["also check Oslo"]
    signal = Signal.objects.get()
    assert (signal.status, signal.delivered_in_run_id) == (SignalStatus.DELIVERED, running_run.id)


def test_delivery_into_a_run_does_not_wait_for_rows_being_added_under_it(thread, running_run):
    # What an open transaction that adds an event or a span of the run holds on its row.
    with held(f"SELECT 1 FROM {table(Run)} WHERE id = %s FOR KEY SHARE", [running_run.pk]):
        with no_waiting():
            result = send_message(thread=thread, message="one more thing")
    assert (result.decision, result.run_id) == ("deliver", running_run.id)
    assert signals_drain_for_run(running_run) == ["one more thing"]


def test_delivery_still_waits_for_the_runs_final_status_update(thread, running_run):
    """The lock that orders a sender against the run's end still conflicts with it: while
    the run's final update is uncommitted, the sender waits (here: until its timeout)."""
    with held(
        f"UPDATE {table(Run)} SET status = 'completed' WHERE id = %s RETURNING 1",
        [running_run.pk],
    ):
        with connection.cursor() as cursor:
            cursor.execute("SET lock_timeout = '200ms'")
        try:
            with pytest.raises(Exception, match="lock timeout"):
                send_message(thread=thread, message="too late?")
        finally:
            with connection.cursor() as cursor:
                cursor.execute("SET lock_timeout = 0")
    assert not Signal.objects.exists()
