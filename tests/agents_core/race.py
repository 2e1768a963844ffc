"""Lose a race on a unique column for real: another transaction inserts the same value and
holds it uncommitted while our request passes its up-front check and blocks on the unique
index; then the other transaction commits and our INSERT fails with IntegrityError."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

from django.db import connection, connections, transaction


def _backends_waiting_on_a_lock() -> int:
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT count(*) FROM pg_stat_activity "
            "WHERE datname = current_database() AND wait_event_type = 'Lock'"
        )
        return cursor.fetchone()[0]


def _in_thread(target: Callable[[], Any], box: dict[str, Any]) -> threading.Thread:
    def run() -> None:
        try:
            box["result"] = target()
        except BaseException as exc:  # handed to the test thread
            box["error"] = exc
        finally:
            connections.close_all()

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    return thread


def lose_the_race(*, insert_rival: Callable[[], Any], request: Callable[[], Any]) -> Any:
    """Run `request` while `insert_rival` holds the same unique value uncommitted."""
    rival_inserted, rival_may_commit = threading.Event(), threading.Event()

    def rival() -> None:
        with transaction.atomic():
            insert_rival()
            rival_inserted.set()
            if not rival_may_commit.wait(30):
                raise TimeoutError("the racing request never blocked on the unique index")

    rival_box: dict[str, Any] = {}
    rival_thread = _in_thread(rival, rival_box)
    assert rival_inserted.wait(30), rival_box
    request_box: dict[str, Any] = {}
    request_thread = _in_thread(request, request_box)
    deadline = time.monotonic() + 30
    while _backends_waiting_on_a_lock() == 0:
        assert time.monotonic() < deadline, "the request never waited for the rival's row"
        assert request_thread.is_alive(), request_box
        time.sleep(0.01)
    rival_may_commit.set()
    rival_thread.join(30)
    request_thread.join(30)
    assert "error" not in rival_box, rival_box["error"]
    if "error" in request_box:
        raise request_box["error"]
    return request_box["result"]


@contextmanager
def held_uncommitted(insert: Callable[[], Any]) -> Iterator[None]:
    """`insert` in a transaction of another thread, held open for the block (a writer
    that reaches the same unique value waits on it) and rolled back at its end."""
    held, release = threading.Event(), threading.Event()

    def hold() -> None:
        with transaction.atomic():
            insert()
            held.set()
            release.wait(120)
            transaction.set_rollback(True)

    thread = _in_thread(hold, box := {})
    assert held.wait(30), box
    try:
        yield
    finally:
        release.set()
        thread.join(30)
