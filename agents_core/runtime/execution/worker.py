"""Run workers: processes that execute runs apart from the web processes.

With `STUDIO_RUN_EXECUTOR = "worker"` a web process never executes a run itself: the run is
created (or resumed) with `worker = "queued"` in the same transaction, and the web process
then wakes the workers. A worker
(`manage.py execute_runs`) claims queued runs with `SELECT ... FOR UPDATE SKIP LOCKED`
(two workers never take the same run), writes its name on them, and executes each as a
task of its event loop: litellm, the incremental parser, the stream writer and the
database writes run there, and the web process only relays events to websockets. The
claim is in the database, so nothing is lost when no worker listens: a queued run waits.

The wake-up is a PostgreSQL notification: the web process NOTIFYs `RUNS_QUEUED` once
the run's row is committed, and each worker LISTENs on a connection of its own (waiting
on its socket: an idle worker spends nothing until then). A worker that (re)connects
claims at once, which covers what was queued while it was not listening, and looks for
queued runs again at every beat (`STUDIO_RUN_WORKER_POLL_SECONDS`). An abort asked in
another process comes the same way (`RUN_ABORT`, the run's id), with the runs' poll of
their abort flag (runtime/execution/active.py) slowed to the beat's pace as a safety net.

Why not Celery: a run is a long-lived asyncio task that mostly waits on the model; a
prefork Celery worker would hold a whole process per streaming chat. Celery keeps what it
is good at here (async tool calls, digests, sweeps).

A worker that dies (killed, its machine gone) cannot end its runs: each worker writes a
heartbeat (`RunWorkerBeat`) at every beat, and ends as interrupted (`run-error`, code
`interrupted`) the runs claimed by a worker whose beat is older than
`STUDIO_RUN_WORKER_DEAD_SECONDS`; a worker that starts ends those left under its own name.
"""

from __future__ import annotations

import asyncio
import logging
import os
import signal
import socket
import sys
from datetime import timedelta
from typing import Any

from django.conf import settings
from django.utils import timezone

from agents_core.models import Run, RunWorkerBeat
from agents_core.runtime.execution import active, heap
from agents_core.runtime.execution.processes import (
    INLINE_PREFIX,
    QUEUED,
    RUN_ABORT,
    RUNS_QUEUED,
    limit_helper_threads,
    process_beat,
    process_gone,
)
from agents_core.runtime.run.loop import execute_run
from agents_core.runtime.run.model_step import litellm_module
from agents_core.runtime.storage import db as runtime_db
from agents_core.runtime.storage.db import db
from agents_core.services.runs import run_end_interrupted, runs_claim

logger = logging.getLogger(__name__)


def worker_tick(*, name: str, dead_after: float, first: bool = False) -> list[str]:
    """Beat for `name`, then end the runs of dead workers; returns the ids of those ended.

    `first`: the worker is starting, so any run still claimed under its name was left by an
    earlier process of that name and is ended too."""
    process_beat(name=name, started=first)
    now = timezone.now()
    alive = RunWorkerBeat.objects.filter(beat_at__gte=now - timedelta(seconds=dead_after))
    running = Run.objects.running()
    # This worker just beat, so its own runs are among the live ones, except at its start.
    # Runs executed inline by web processes are ended when their thread gets a new message
    # (services.runs.run_recover_stale), where the thread's last event is looked at too.
    orphans = (
        running.exclude(worker__in=["", QUEUED])
        .exclude(worker__startswith=INLINE_PREFIX)
        .exclude(worker__in=alive.values("name"))
    )
    if first:
        orphans = orphans | running.filter(worker=name)
    ended = []
    for run in orphans.only("pk", "thread_id", "worker"):
        if run_end_interrupted(run=run, expect_worker=run.worker):
            logger.warning(
                "Run %s was claimed by %s, which stopped: ended as interrupted", run.pk, run.worker
            )
            ended.append(str(run.pk))
    return ended


class RunWorker:
    """Claims queued runs and executes them on this process's event loop."""

    def __init__(
        self,
        *,
        name: str | None = None,
        concurrency: int | None = None,
        poll_seconds: float | None = None,
    ) -> None:
        self.name = name or f"{socket.gethostname()}:{os.getpid()}"
        self.concurrency = concurrency or settings.STUDIO_RUN_WORKER_CONCURRENCY
        self.poll_seconds = poll_seconds or float(settings.STUDIO_RUN_WORKER_POLL_SECONDS)
        self.claim_batch = max(1, settings.STUDIO_RUN_WORKER_CLAIM_BATCH)
        self.tasks: dict[str, asyncio.Task] = {}
        self.wake = asyncio.Event()
        self.stopping = asyncio.Event()

    async def serve(self) -> None:
        """Until `stop()`: claim, execute, wait for a wake-up or the next beat."""
        limit_helper_threads(settings.STUDIO_RUN_WORKER_HELPER_THREADS)
        listener = asyncio.ensure_future(self._listen_database())
        active.poll_aborts_every(self.poll_seconds)
        logger.info("Run worker %s started (up to %d runs at once)", self.name, self.concurrency)
        # Never less than three beats: a live worker's beat is up to one beat old.
        dead_after = max(float(settings.STUDIO_RUN_WORKER_DEAD_SECONDS), 3 * self.poll_seconds)
        first, next_tick = True, 0.0
        loop = asyncio.get_running_loop()
        try:
            while not self.stopping.is_set():
                self.wake.clear()
                if loop.time() >= next_tick:
                    next_tick = loop.time() + self.poll_seconds
                    try:
                        await db(worker_tick, name=self.name, dead_after=dead_after, first=first)
                        first = False
                    except Exception:  # noqa: BLE001 - database down: the next beat retries
                        logger.exception("Run worker heartbeat failed")
                try:
                    limit = min(self.claim_batch, self.concurrency - len(self.tasks))
                    claimed = await db(runs_claim, worker=self.name, limit=limit)
                    for run_id in claimed:
                        self._execute(run_id)
                    if claimed and len(claimed) == limit:
                        # More may be queued: claim again once the loop has gone round, so
                        # that the other workers, woken too, take their share (a busier
                        # worker comes round later and so takes fewer).
                        self.wake.set()
                except Exception:  # noqa: BLE001 - database down: try again at the next poll
                    logger.exception("Claiming runs failed")
                if self.wake.is_set():
                    await asyncio.sleep(0)
                    continue
                waits = [
                    asyncio.ensure_future(self.wake.wait()),
                    asyncio.ensure_future(self.stopping.wait()),
                ]
                await asyncio.wait(
                    waits,
                    timeout=max(0.0, next_tick - loop.time()),
                    return_when=asyncio.FIRST_COMPLETED,
                )
                for waiter in waits:
                    waiter.cancel()
        finally:
            listener.cancel()
            await self._drain()
            active.poll_aborts_every(active.ABORT_POLL_SECONDS)
            try:
                await db(process_gone, name=self.name)
            except Exception:  # noqa: BLE001 - its beat then just ages out
                logger.exception("Run worker %s could not remove its heartbeat", self.name)

    def stop(self) -> None:
        self.stopping.set()

    def _execute(self, run_id: str) -> None:
        task = asyncio.ensure_future(execute_run(run_id))
        self.tasks[run_id] = task

        def done(finished: asyncio.Task) -> None:
            self.tasks.pop(run_id, None)
            if not finished.cancelled() and finished.exception() is not None:
                logger.error(
                    "Run %s failed in worker %s", run_id, self.name, exc_info=finished.exception()
                )
            self.wake.set()  # room for another run

        task.add_done_callback(done)

    async def _listen_database(self) -> None:
        """LISTEN for queued runs and aborts on a connection of its own, which waits on
        its socket; after (re)connecting, claim at once (a run queued meanwhile)."""
        import psycopg
        from django.db import connection

        # Django's parameters, less those only its own (sync) connections take.
        params = {
            key: value
            for key, value in connection.get_connection_params().items()
            if key not in ("context", "cursor_factory", "prepare_threshold")
        }
        while True:
            try:
                conn = await psycopg.AsyncConnection.connect(autocommit=True, **params)
                async with conn:
                    await conn.execute(f"LISTEN {RUNS_QUEUED}")
                    await conn.execute(f"LISTEN {RUN_ABORT}")
                    self.wake.set()
                    await self._notified(conn.pgconn)
            except asyncio.CancelledError:
                raise
            except Exception:  # noqa: BLE001 - database restarted: the beat covers the gap
                logger.warning("Run worker notifications interrupted; retrying", exc_info=True)
                await asyncio.sleep(min(self.poll_seconds, 1.0))

    async def _notified(self, pgconn: Any) -> None:
        """Act on the connection's notifications as they come, until it fails. The loop
        watches the socket itself: psycopg's `notifies()` wakes ten times a second to
        check for Ctrl-C, which an idle worker would pay for."""
        readable = asyncio.Event()
        loop = asyncio.get_running_loop()
        fd = pgconn.socket  # a lost connection no longer tells it
        loop.add_reader(fd, readable.set)
        try:
            while True:
                # What libpq already read (with LISTEN's answer) first, then the socket.
                while (note := pgconn.notifies()) is not None:
                    if note.relname == RUNS_QUEUED.encode():
                        self.wake.set()
                    elif note.relname == RUN_ABORT.encode():
                        active.request_abort(note.extra.decode())
                await readable.wait()
                readable.clear()
                pgconn.consume_input()  # OperationalError once the connection is gone
        finally:
            loop.remove_reader(fd)

    async def _drain(self) -> None:
        """On shutdown: let runs finish for a while, then stop them (they end as aborted,
        with what they streamed kept)."""
        if not self.tasks:
            return
        grace = float(settings.STUDIO_RUN_WORKER_GRACE_SECONDS)
        logger.info(
            "Run worker %s: waiting up to %.0f s for %d runs", self.name, grace, len(self.tasks)
        )
        _, pending = await asyncio.wait(list(self.tasks.values()), timeout=grace)
        for task in pending:
            task.cancel()
        if pending:
            await asyncio.wait(pending, timeout=10)


async def warm_up() -> None:
    """Import litellm and stream one offline answer before claiming runs: litellm loads
    much of itself lazily on its first call (about half a second of CPU here), which would
    otherwise stall the first runs this worker takes and every stream beside them."""
    try:
        litellm = await litellm_module(offline=True)
        response = await litellm.acompletion(
            model=settings.STUDIO_OFFLINE_MODEL,
            stream=True,
            delay=0,
            messages=[{"role": "user", "content": "warm up"}],
        )
        async for _ in response:
            pass
    except Exception:  # noqa: BLE001 - a cold worker still works, only slower at first
        logger.warning("Run worker warm-up failed", exc_info=True)


def _prefer_the_event_loop() -> None:
    """A run worker's event loop carries every stream; its threads (database writes, litellm's
    end-of-stream work) carry work that can wait. Fewer database threads and a shorter GIL
    switch interval let the loop in sooner when they are busy (docs/benchmarks.md). On a
    machine it shares with web processes, a worker yields the CPU to them
    (STUDIO_RUN_WORKER_NICE): a burst of messages gets its answers before the runs'
    work (docs/runs.md, "What a run costs")."""
    runtime_db.configure(threads=settings.STUDIO_RUN_WORKER_DB_THREADS)
    sys.setswitchinterval(float(settings.STUDIO_RUN_WORKER_SWITCH_INTERVAL))
    if settings.STUDIO_RUN_WORKER_NICE > 0:
        os.nice(settings.STUDIO_RUN_WORKER_NICE)


def serve_forever(**options: Any) -> None:
    """`manage.py execute_runs`: serve until SIGTERM or SIGINT."""

    _prefer_the_event_loop()  # process-wide settings: this process is a run worker

    async def main() -> None:
        await warm_up()
        heap.settle()  # after warm-up: what litellm loads on its first call is frozen too
        worker = RunWorker(**options)
        loop = asyncio.get_running_loop()
        for signum in (signal.SIGTERM, signal.SIGINT):
            loop.add_signal_handler(signum, worker.stop)
        await worker.serve()

    asyncio.run(main())
