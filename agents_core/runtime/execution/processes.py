"""The processes that execute runs: which executor is in use, the name a run carries of the
process executing it, and that process's heartbeat.

A run's `worker` field says who executes it: `queued` until a run worker claims it
(`STUDIO_RUN_EXECUTOR = "worker"`), then that worker's name; with the inline executor, the
name of the web process that started it (`web:<host>:<pid>:<token>`). Every process that
executes runs beats (`RunWorkerBeat`), so the runs of a process that stopped beating can be
ended as interrupted (services/runs.py, runtime/execution/worker.py).
"""

from __future__ import annotations

import logging
import os
import secrets
import socket
import sys
from datetime import timedelta
from typing import Any

from django.conf import settings
from django.utils import timezone

from agents_core.models import RunWorkerBeat

logger = logging.getLogger(__name__)

QUEUED = "queued"
# PostgreSQL notification channels the run workers LISTEN on: a run was queued (no
# payload); a run was asked to stop (payload: its id).
RUNS_QUEUED = "studio_runs_queued"
RUN_ABORT = "studio_run_abort"
INLINE_PREFIX = "web:"
_process: dict[str, Any] = {}


def uses_workers() -> bool:
    return settings.STUDIO_RUN_EXECUTOR == "worker"


def limit_helper_threads(limit: int) -> None:
    """At most `limit` threads for litellm's helper work on this event loop (anyio's, where
    litellm assembles a stream it reads to its end: a CPU burst as long as the stream).
    anyio's default of 40 lets 40 of them take the GIL from the loop that carries every
    stream when many streams end together; a few threads queue that work instead."""
    import anyio.to_thread

    anyio.to_thread.current_default_thread_limiter().total_tokens = max(1, limit)


def favour_the_loop_inline() -> bool:
    """In a web process that executes runs inline, from its first run on (once; False when
    it was done or is off): its event loop carries every stream and every websocket, and the
    threads beside it (the runtime's database work, litellm's request in the loop's default
    executor) hold the GIL up to `sys.getswitchinterval()` each time the loop asks for it
    back, 5 ms by default. A hundred runs starting or ending at once keep those threads
    busy, and every delta then waits that long, again and again. So the loop gets the GIL
    back after `STUDIO_INLINE_SWITCH_INTERVAL` seconds at most, and litellm's helper work
    gets `STUDIO_INLINE_HELPER_THREADS` threads, as in a run worker (runtime/execution/worker.py).
    Call it from the event loop."""
    interval = float(settings.STUDIO_INLINE_SWITCH_INTERVAL)
    if _process.get("favoured") or interval <= 0:
        return False
    sys.setswitchinterval(interval)
    limit_helper_threads(settings.STUDIO_INLINE_HELPER_THREADS)
    _process["favoured"] = True
    return True


def process_name() -> str:
    """This process's name on the runs it executes inline (`web:<host>:<pid>:<token>`; the
    token tells a restarted process that got the same pid from the dead one)."""
    if _process.get("pid") != os.getpid():
        _process.update(
            pid=os.getpid(),
            name=f"{INLINE_PREFIX}{socket.gethostname()}:{os.getpid()}:{secrets.token_hex(3)}",
        )
    return _process["name"]


def queue_marker() -> str:
    """What a run that is about to run gets as its `worker`: queued for a run worker, or
    the name of this process, which executes it (inline)."""
    return QUEUED if uses_workers() else process_name()


def process_beat(*, name: str, started: bool = False, sweep: bool = False) -> None:
    """The heartbeat of a process executing runs: a run worker's at every poll, a web
    process's (inline runs) from active.py's watcher while it has runs. `started`: the
    process has just started (its beat starts afresh). `sweep`: also forget beats silent
    for a day."""
    now = timezone.now()
    if started or not RunWorkerBeat.objects.filter(name=name).update(beat_at=now):
        RunWorkerBeat.objects.update_or_create(
            name=name, defaults={"started_at": now, "beat_at": now}
        )
    if sweep:
        RunWorkerBeat.objects.filter(beat_at__lt=now - timedelta(days=1)).delete()


def process_is_dead(*, name: str, dead_after: float) -> bool:
    """True when the process named on a run has not beaten for `dead_after` seconds."""
    beat = RunWorkerBeat.objects.filter(name=name).values_list("beat_at", flat=True).first()
    return beat is None or beat < timezone.now() - timedelta(seconds=dead_after)


def process_gone(*, name: str) -> None:
    """A worker that stops cleanly takes its beat away (its runs are ended or aborted)."""
    RunWorkerBeat.objects.filter(name=name).delete()


def notify(channel: str, payload: str = "") -> bool:
    """NOTIFY `channel` (RUNS_QUEUED, RUN_ABORT) to the run workers listening on it. Inside
    a transaction PostgreSQL delivers it when the transaction commits; False when the
    notification failed."""
    from django.db import DatabaseError, connection

    try:
        with connection.cursor() as cursor:
            cursor.execute("SELECT pg_notify(%s, %s)", [channel, payload])
    except DatabaseError:
        logger.warning("Could not notify %s; the run workers' poll covers it", channel)
        return False
    return True


def wake_workers() -> None:
    """Tell the workers a run is queued: a NOTIFY (the run's row is committed, so every
    listening worker gets it and claims at once). Workers also look for queued runs at
    every beat."""
    notify(RUNS_QUEUED)
