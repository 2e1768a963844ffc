"""How many SQL statements a run's start and its execution to the end make: a regression
guard (docs/runs.md, "What a run costs"), not a timing.

The runtime's database threads (the runs' queries and the stream writer's) are one thread
here, whose connection `django_assert_max_num_queries` watches."""

from __future__ import annotations

import asyncio
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import pytest

pytestmark = pytest.mark.django_db(transaction=True)

# A chat with a tool call: run_start (BEGIN, the check for a suspended run, the run with its
# message and the thread's title in one statement, COMMIT; its run-start event goes through
# the stream's own psycopg cursor, not counted), then the run: its setup (2), the stream
# sink's seed of the thread's numbering (1), two steps' memory, message and signals check
# (7) and their saves (one statement each), the tool result (1), the end (BEGIN, the
# run, COMMIT; its run-finish goes through the stream's own cursor, not counted), the
# spans (1) and the signals' check after the run (1). Measured: 37 before the writes
# without the ORM (docs/runs.md).
START_QUERIES = 4
RUN_QUERIES = 18


@pytest.fixture
def one_database_thread(monkeypatch):
    """(the runtime's one database thread's connection, the runs launched)."""
    from django.db import connections

    from agents_core.runtime.execution import active
    from agents_core.runtime.storage import db as runtime_db
    from traces import recorder

    pool = ThreadPoolExecutor(max_workers=1)
    monkeypatch.setattr(runtime_db, "_executor", pool)
    monkeypatch.setattr(runtime_db, "_stream_executor", pool)
    launched: list[Any] = []
    monkeypatch.setattr(active, "launch_many", launched.extend)
    # The process's heartbeat and abort poll (once a second), and the spans of a run
    # written at a step boundary (at most once a second): how many depends on how long
    # the run takes, on a busy machine too; its spans are written at its end all the same.
    monkeypatch.setattr(active, "watch_aborts", lambda loop: None)
    monkeypatch.setattr(recorder, "STEP_FLUSH_SECONDS", 3600.0)
    yield pool.submit(lambda: connections["default"]).result(), launched
    pool.submit(lambda: connections["default"].close()).result()
    pool.shutdown()


def test_a_runs_start_and_execution_make_a_bounded_number_of_statements(
    make_thread, owner, one_database_thread, django_assert_max_num_queries
):
    from agents_core.models import RunStatus, StreamEvent
    from agents_core.runtime.run.loop import execute_run
    from agents_core.services.runs import run_start
    from traces.models import Span

    connection, launched = one_database_thread
    thread = make_thread()
    with django_assert_max_num_queries(START_QUERIES):
        run = run_start(thread=thread, message="use weather_lookup for Paris", user=owner)
    assert launched == [run.pk]
    assert list(StreamEvent.objects.filter(run=run).values_list("type", flat=True)) == ["run-start"]

    with django_assert_max_num_queries(RUN_QUERIES, connection=connection):
        result = asyncio.run(execute_run(run.pk))

    assert result.status == RunStatus.COMPLETED
    run.refresh_from_db()
    assert (run.status, run.step, run.model) == (RunStatus.COMPLETED, 2, "studio/scripted")
    kinds = sorted(Span.objects.filter(run=run).values_list("kind", flat=True))
    assert kinds == ["model", "model", "run", "tool"]
    types = list(StreamEvent.objects.filter(run=run).order_by("seq").values_list("type", flat=True))
    assert types[0] == "run-start" and types[-1] == "run-finish" and "tool-result" in types
