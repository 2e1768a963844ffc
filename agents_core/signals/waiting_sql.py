"""Whether signals wait for a run, in hand-written SQL: asked before every model call and
at every run's end, where building the ORM's query cost more than running it
(docs/runs.md, "What a run costs")."""

from __future__ import annotations

from django.db import connection

from agents_core.models import Run, Signal, SignalStatus

_ANY_SQL = (
    "SELECT EXISTS (SELECT 1 FROM {signals} WHERE (run_id = %s::uuid AND status = %s) "
    "OR (%s AND thread_id = %s::uuid AND status = %s))"
)


def signals_waiting(run: Run, *, thread_queue: bool) -> bool:
    """Whether signals wait for the run (pending), or with `thread_queue` also on its
    thread (queued)."""
    params = [str(run.pk), SignalStatus.PENDING, thread_queue, str(run.thread_id)]
    with connection.cursor() as cursor:
        cursor.execute(
            _ANY_SQL.format(signals=Signal._meta.db_table), [*params, SignalStatus.QUEUED]
        )
        return bool(cursor.fetchone()[0])
