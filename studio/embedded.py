"""The embedded studio's Celery worker: a thread in the web process, on the memory broker,
with beat beside it in a thread too, so that scheduled jobs (digests) run.

Celery's `beat=True` forks beat into a child process. Stopped by SIGTERM (a service
manager, `docker stop`, a test), the web process exited and left that child running
forever, orphaned; a thread ends with the process."""

from __future__ import annotations

import threading

from celery.beat import EmbeddedService

from studio.celery import app
from tools_app.recovery import recovery_start


def start_embedded_worker() -> threading.Thread:
    worker = app.WorkController(
        pool_cls="threads",
        concurrency=2,
        beat=False,
        without_heartbeat=True,
        without_mingle=True,
        without_gossip=True,
        loglevel="WARNING",
        hostname="embedded@studio",
    )
    thread = threading.Thread(target=worker.start, name="celery-embedded", daemon=True)
    thread.start()
    EmbeddedService(app, thread=True).start()
    # A bare WorkController sends neither worker_ready nor worker_process_init: async tool
    # runs left running by a studio that was killed are taken back from here.
    recovery_start()
    return thread
