"""Database access from the run loop.

The loop is async and the ORM is not: every query runs in a small pool of threads that
keep their connections open (a run makes many small writes; reconnecting for each, as
`database_sync_to_async` does with CONN_MAX_AGE=0, costs more than the write).

The stream writer has a thread of its own (`db_stream`): its batches carry every run's
deltas, and in the shared pool they waited behind whatever the runs asked for (a burst of
runs starting or ending queued dozens of set-ups and step saves ahead of them).
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
_stream_executor: ThreadPoolExecutor | None = None
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
        workers = _threads or settings.STUDIO_RUNTIME_DB_THREADS
        _executor = ThreadPoolExecutor(max_workers=workers, thread_name_prefix="runtime-db")
    return _executor


def _stream_pool() -> ThreadPoolExecutor:
    global _stream_executor
    if _stream_executor is None:
        _stream_executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="runtime-db-stream")
    return _stream_executor


def with_reconnect(fn: Callable[..., T], *args: Any, **kwargs: Any) -> T:
    """Call fn; when the connection kept open has died, once more on a new one."""
    return _call(fn, args, kwargs)


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


async def db_stream(fn: Callable[..., T], *args: Any, **kwargs: Any) -> T:
    """Run a synchronous function in the stream writer's own database thread."""
    loop = asyncio.get_running_loop()
    return await loop.run_in_executor(_stream_pool(), functools.partial(_call, fn, args, kwargs))
