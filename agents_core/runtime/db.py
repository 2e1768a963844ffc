"""Database access from the run loop.

The loop is async and the ORM is not: every query runs in a small pool of threads that
keep their connections open (a run makes many small writes; reconnecting for each, as
`database_sync_to_async` does with CONN_MAX_AGE=0, costs more than the write).
"""

from __future__ import annotations

import asyncio
import functools
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any, TypeVar

from django.conf import settings
from django.db import InterfaceError, OperationalError, connection

T = TypeVar("T")
_executor: ThreadPoolExecutor | None = None


_threads: int | None = None


def configure(*, threads: int) -> None:
    """Set the number of database threads (before the first query; run workers use it)."""
    global _threads
    if _executor is not None:
        raise RuntimeError("The runtime's database threads are already running.")
    _threads = max(1, threads)


def _pool() -> ThreadPoolExecutor:
    global _executor
    if _executor is None:
        sqlite = settings.DATABASES["default"]["ENGINE"].endswith("sqlite3")
        workers = _threads or int(getattr(settings, "STUDIO_RUNTIME_DB_THREADS", 4))
        _executor = ThreadPoolExecutor(max_workers=1 if sqlite else workers,
                                       thread_name_prefix="runtime-db")
    return _executor


def _call(fn: Callable[..., T], args: tuple, kwargs: dict) -> T:
    try:
        return fn(*args, **kwargs)
    except (InterfaceError, OperationalError):
        # A connection kept open may have died (database restarted): retry once afresh.
        if connection.in_atomic_block:
            raise
        connection.close()
        return fn(*args, **kwargs)


async def db(fn: Callable[..., T], *args: Any, **kwargs: Any) -> T:
    """Run a synchronous ORM function in the runtime's database threads."""
    loop = asyncio.get_running_loop()
    return await loop.run_in_executor(_pool(), functools.partial(_call, fn, args, kwargs))
