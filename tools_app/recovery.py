"""The Celery worker's side of tool-run recovery: a thread that runs the sweep
(tools_app.services.runs.tool_runs_sweep) as soon as the worker starts and then every
STUDIO_TOOL_RUN_RECOVER_SECONDS, so a run whose worker died is taken back within about
the lease plus that period, whether or not beat is running.

The thread lives in each process that executes tasks: a prefork pool's children and a
solo worker (worker_process_init), a threads-pool worker (worker_ready), the embedded
studio's worker (studio/embedded.py starts it). Never in a prefork pool's parent: the
children it forks later (after one was killed) would inherit its pooled database
connections. The surviving children of a worker, the replacement of a killed child and
every other worker sweep, and each move of a run is a conditional update, so sweeping
from many processes at once is safe.

Other apps whose Celery work holds leases register their own sweep with
`recovery_sweep_register` (evals does, for suite runs): the same thread runs it after the
tool runs' sweep, so this app needs not know them.
"""

from __future__ import annotations

import logging
import os
import threading
from collections.abc import Callable
from typing import Any

from django.conf import settings
from django.db import DatabaseError, connection

from tools_app.services.runs import tool_runs_sweep

logger = logging.getLogger(__name__)

_state: dict[str, Any] = {}
_sweeps: dict[str, Callable[[], Any]] = {"tool runs": tool_runs_sweep}


def recovery_sweep_register(name: str, sweep: Callable[[], Any]) -> None:
    """Run `sweep` in every worker's recovery thread too (from an AppConfig.ready)."""
    _sweeps[name] = sweep


def recovery_start(sender: Any = None, **_: Any) -> None:
    """worker_process_init / worker_ready: start the sweeping thread (once per process)."""
    pool = getattr(sender, "pool", None)  # worker_ready's sender is the worker's consumer
    if pool is not None and type(pool).__module__.endswith(".prefork"):
        return  # its children sweep
    if _state.get("pid") == os.getpid():
        return
    stop = threading.Event()
    _state.update(pid=os.getpid(), stop=stop)
    threading.Thread(
        target=_sweep_until, args=(stop,), name="tool-run-recovery", daemon=True
    ).start()


def recovery_stop(**_: Any) -> None:
    """worker_shutdown: let the thread end."""
    if _state.get("pid") == os.getpid():
        _state.pop("pid")
        _state.pop("stop").set()


def _sweep_until(stop: threading.Event) -> None:
    try:
        while True:
            for name, sweep in list(_sweeps.items()):
                try:
                    sweep()
                except DatabaseError:
                    logger.warning(
                        "Recovery of %s could not reach the database", name, exc_info=True
                    )
                    connection.close()
                except Exception:  # noqa: BLE001 - one failed sweep must not end recovery
                    logger.exception("Recovery of %s failed; it runs again in a moment", name)
            if stop.wait(settings.STUDIO_TOOL_RUN_RECOVER_SECONDS):
                return
    finally:
        connection.close()
