"""The Celery worker's side of tool-run recovery: a thread in every worker process that
runs the sweep (tools_app.services.runs.tool_runs_sweep) when the worker is ready and
then every STUDIO_TOOL_RUN_RECOVER_SECONDS, so a run whose worker died is taken back
within about the lease plus that period, whether or not beat is running.

Connected to Celery's worker_ready / worker_shutdown signals (ToolsAppConfig.ready). The
thread lives in the worker's main process, which outlives the pool's children: a worker
whose child was killed recovers that child's run itself. Every worker sweeping at once
is safe: each move of a run is a conditional update.
"""

from __future__ import annotations

import logging
import threading
from typing import Any

from django.conf import settings
from django.db import DatabaseError, connection

from tools_app.services.runs import tool_runs_sweep

logger = logging.getLogger(__name__)

_state: dict[str, threading.Event] = {}


def recovery_start(**_: Any) -> None:
    """worker_ready: start the sweeping thread (once per process)."""
    if "stop" in _state:
        return
    stop = _state["stop"] = threading.Event()
    threading.Thread(
        target=_sweep_until, args=(stop,), name="tool-run-recovery", daemon=True
    ).start()


def recovery_stop(**_: Any) -> None:
    """worker_shutdown: let the thread end."""
    stop = _state.pop("stop", None)
    if stop is not None:
        stop.set()


def _sweep_until(stop: threading.Event) -> None:
    try:
        while True:
            try:
                tool_runs_sweep()
            except DatabaseError:
                logger.warning("Tool run recovery could not reach the database", exc_info=True)
                connection.close()
            except Exception:  # noqa: BLE001 - one failed sweep must not end recovery
                logger.exception("Tool run recovery failed; it runs again in a moment")
            if stop.wait(settings.STUDIO_TOOL_RUN_RECOVER_SECONDS):
                return
    finally:
        connection.close()
