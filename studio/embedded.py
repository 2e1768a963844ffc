"""The embedded studio's Celery worker: a thread in the web process, on the memory broker,
with beat embedded so that scheduled jobs (digests) run too."""

from __future__ import annotations

import threading

from studio.celery import app


def start_embedded_worker() -> threading.Thread:
    worker = app.WorkController(
        pool_cls="threads",
        concurrency=2,
        beat=True,
        without_heartbeat=True,
        without_mingle=True,
        without_gossip=True,
        loglevel="WARNING",
        hostname="embedded@studio",
    )
    thread = threading.Thread(target=worker.start, name="celery-embedded", daemon=True)
    thread.start()
    return thread
