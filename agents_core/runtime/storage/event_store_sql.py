"""Storing stream events in hand-written SQL: each batch numbered per thread and inserted
in one statement (the stream writer's every batch; through the ORM a batch was several
round trips and most of its CPU, docs/benchmarks.md).

Sequence numbers come from an atomic `UPDATE thread SET last_seq = last_seq + n`, in the
same statement as the insert of the events, numbered from the value it replaced: a second
writer (another process, a Celery worker) waits on the thread's row until the first
commits, so an event is always stored before any later-numbered event is published
(runtime/bus/events.py publishes them). The columns of its INSERTs are checked against the
models (tests/agents_core/runtime/test_sql_columns.py).
"""

from __future__ import annotations

import contextlib
import json
from typing import Any

from django.db import connection, transaction
from django.utils import timezone

from agents_core.models import StreamEvent, Thread
from common.json_input import replace_nul


def events_store_many(batches: list[tuple[Any, Any, list[dict[str, Any]]]]) -> list[list[str]]:
    """Number and insert the events of many runs at once (sets each event's `seq`),
    atomically: the threads' `last_seq` are raised (the row lock makes a second writer of a
    thread wait until this one commits) and every event is inserted. Returns the events as
    JSON text, batch by batch (what subscribers are sent)."""
    batches = [
        (str(thread_id), str(run_id) if run_id else None, events)
        for thread_id, run_id, events in batches
    ]
    keys = sorted({thread_id for thread_id, _, _ in batches})
    # One thread: one statement, atomic alone; several: the lock first, then the statement.
    with transaction.atomic() if len(keys) > 1 else contextlib.nullcontext():
        return _store_many_postgresql(keys, batches)


def _number(
    last: dict[str, int],
    batches: list[tuple[str, str | None, list[dict[str, Any]]]],
    bodies: list[list[str]],
) -> list[list[str]]:
    """Number the events after each thread's `last` and encode them from `bodies` (the
    events already encoded without their `seq`)."""
    missing = {thread_id for thread_id, _, _ in batches} - last.keys()
    if missing:
        raise Thread.DoesNotExist(f"Thread {sorted(missing)[0]} is gone.")
    texts = []
    for number, (thread_id, _, events) in enumerate(batches):
        encoded = []
        for index, event in enumerate(events):
            last[thread_id] += 1
            event["seq"] = last[thread_id]
            # What json.dumps gives with `seq` set last, without encoding again.
            encoded.append(f'{bodies[number][index][:-1]}, "seq": {event["seq"]}}}')
        texts.append(encoded)
    return texts


# One statement numbers and inserts the events of every thread of a batch (given as one
# JSON array of [thread, run, event] in order): the threads' `last_seq` are raised by their
# counts and the events numbered from the previous value, in the order given.
_STORE_SQL = """
WITH input AS MATERIALIZED (
    SELECT (x.e->>0)::uuid AS thread_id, (x.e->>1)::uuid AS run_id, x.e->2 AS payload, x.ord
    FROM jsonb_array_elements(%s::jsonb) WITH ORDINALITY AS x(e, ord)
), counts AS (
    SELECT thread_id, count(*) AS n FROM input GROUP BY thread_id
), numbered AS (
    UPDATE {threads} AS t SET last_seq = t.last_seq + counts.n, updated_at = %s
    FROM counts WHERE t.id = counts.thread_id
    RETURNING t.id, t.last_seq - counts.n AS base
), inserted AS (
    INSERT INTO {events} (thread_id, run_id, seq, type, payload, created_at)
    SELECT thread_id, run_id, seq, payload->>'type', payload || jsonb_build_object('seq', seq), %s
    FROM (SELECT input.thread_id, input.run_id, input.payload,
                 numbered.base + row_number() OVER (PARTITION BY input.thread_id
                                                    ORDER BY input.ord) AS seq
          FROM input JOIN numbered ON numbered.id = input.thread_id) AS rows
)
SELECT id::text, base FROM numbered
"""


def _store_many_postgresql(
    keys: list[str], batches: list[tuple[str, str | None, list[dict[str, Any]]]]
) -> list[list[str]]:
    """One statement (and, for several threads, a lock taken first) whatever the number of
    events: the database numbers and inserts them, so that a batch is one round trip. It
    was seven (begin, update, copy and commit), which made a delta written alone, as with
    one chat streaming, cost several times what litellm spends on it. The events go as one
    JSON text, encoded once: psycopg's adaptation of list parameters is pure Python."""
    import psycopg

    bodies = [[_jsonb_body(event) for event in events] for _, _, events in batches]
    rows = ",".join(
        f'["{thread_id}",{json.dumps(run_id)},{body}]'
        for (thread_id, run_id, _), encoded in zip(batches, bodies, strict=True)
        for body in encoded
    )
    now = timezone.now()
    connection.ensure_connection()
    # psycopg's own cursor, binding on the server: Django's cursor binds in Python, quoting
    # the whole JSON text into the query (a third of the batch's CPU). Its errors are
    # Django's, as from any cursor (a dead connection is an OperationalError to retry).
    with connection.wrap_database_errors, psycopg.Cursor(connection.connection) as cursor:
        if len(keys) > 1:
            # Lock in id order first: two writers of overlapping threads never deadlock.
            # The lock the UPDATE below takes anyway (FOR NO KEY UPDATE): rows added that
            # reference a thread (messages, signals) do not wait for it.
            cursor.execute(
                f"SELECT 1 FROM {Thread._meta.db_table} "  # noqa: S608
                "WHERE id = ANY(string_to_array(%s, ',')::uuid[]) "
                "ORDER BY id FOR NO KEY UPDATE",
                [",".join(keys)],
            )
        cursor.execute(
            _STORE_SQL.format(threads=Thread._meta.db_table, events=StreamEvent._meta.db_table),
            [f"[{rows}]", now, now],
        )
        last = dict(cursor.fetchall())
    return _number(last, batches, bodies)


def _jsonb_body(event: dict[str, Any]) -> str:
    """The event's JSON without its `seq` (numbered later), as PostgreSQL's jsonb can hold
    it: a NUL character (which a model may emit, and which jsonb refuses, failing the whole
    batch) becomes U+FFFD."""
    event.pop("seq", None)
    text = json.dumps(event, default=str)
    if "\\u0000" not in text:
        return text
    return json.dumps(replace_nul(event), default=str)


def thread_seed(thread_id: Any) -> int:
    """The thread's `last_seq`, read under its row lock: a run's sink numbers its events
    from it. The lock orders the read after any writer that numbered in the database
    before the run's sink was registered as the thread's owner (runtime/bus/handoff.py). It is
    the lock an UPDATE of the row takes (FOR NO KEY UPDATE), as numbering in the database
    does: rows that reference the thread (their foreign key check) do not wait for it.
    One statement in autocommit: it waits for the lock, reads, and lets it go at once (a
    transaction around it added a BEGIN and a COMMIT and held nothing longer)."""
    # Django refuses select_for_update outside a transaction: the statement is written.
    with connection.cursor() as cursor:
        cursor.execute(
            f"SELECT last_seq FROM {Thread._meta.db_table} "  # noqa: S608
            "WHERE id = %s FOR NO KEY UPDATE",
            [str(thread_id)],
        )
        row = cursor.fetchone()
    if row is None:
        raise Thread.DoesNotExist(f"Thread {thread_id} is gone.")
    return int(row[0])


# Events numbered by their run's sink (each payload holds its `seq`), inserted in one
# statement, and each thread's `last_seq` raised to the highest stored.
_STORE_NUMBERED_SQL = """
WITH input AS MATERIALIZED (
    SELECT (x.e->>0)::uuid AS thread_id, (x.e->>1)::uuid AS run_id, x.e->2 AS payload
    FROM jsonb_array_elements(%s::jsonb) AS x(e)
), inserted AS (
    INSERT INTO {events} (thread_id, run_id, seq, type, payload, created_at)
    SELECT thread_id, run_id, (payload->>'seq')::bigint, payload->>'type', payload, %s
    FROM input
)
UPDATE {threads} AS t SET last_seq = GREATEST(t.last_seq, top.seq), updated_at = %s
FROM (SELECT thread_id, max((payload->>'seq')::bigint) AS seq FROM input GROUP BY thread_id)
     AS top
WHERE t.id = top.thread_id
"""


def events_store_numbered(batches: list[tuple[Any, Any, list[str]]]) -> None:
    """Insert events numbered by their runs' sinks (`(thread, run, [event JSON with its
    seq])` per run), all in one statement: the stream writer's batch. A thread deleted
    meanwhile fails the whole statement (the caller retries run by run)."""
    if not any(texts for _, _, texts in batches):
        return
    import psycopg

    rows = ",".join(
        f'["{thread_id}",{json.dumps(str(run_id) if run_id else None)},{_storable(text)}]'
        for thread_id, run_id, texts in batches
        for text in texts
    )
    now = timezone.now()
    connection.ensure_connection()
    with connection.wrap_database_errors, psycopg.Cursor(connection.connection) as cursor:
        cursor.execute(
            _STORE_NUMBERED_SQL.format(
                threads=Thread._meta.db_table, events=StreamEvent._meta.db_table
            ),
            [f"[{rows}]", now, now],
        )


def _storable(text: str) -> str:
    """The event's JSON as jsonb can hold it (a NUL character becomes U+FFFD)."""
    if "\\u0000" not in text:
        return text
    return json.dumps(replace_nul(json.loads(text)), default=str)
