"""PostgreSQL from the event loop, for REST's fast execute path: no thread per query, the
connection parameters, adapters and column conversions of Django's own backend.

Django's ORM refuses the event loop's thread (its connection is blocking), and its async
methods run the query in a thread. This keeps a small psycopg async pool per event loop
(Daphne has one for its life; a test's loop gets its own), opened with what Django's
backend would connect with (`get_connection_params`, its adapters: jsonb read as text),
statements prepared (`STUDIO_DB_PREPARE`), in autocommit and with `synchronous_commit`
off for these sessions: a write here is one statement, atomic by itself, seen by every
reader at once; a crash of PostgreSQL itself within about 0.6 s may lose it
(tools_app.records.relaxed_commit says the same of the console's transaction). Rows
come back as model instances through each field's own converters; rows go in through
each field's `pre_save` and `get_db_prep_save`, so defaults, `auto_now_add`, encoders
and NUL replacement are the model's.

Django's wrapper object is used for its operations and fields' conversions only, never
to connect: `bind()` takes it once, in a synchronous context (at start-up).
"""

from __future__ import annotations

import asyncio
import logging
import weakref
from collections.abc import Sequence
from functools import cache
from typing import Any

from django.conf import settings
from django.db import connections
from django.db.models import Model

logger = logging.getLogger(__name__)

POOL_SIZE = 4
_wrapper: Any = None
_pools: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, Any] = weakref.WeakKeyDictionary()


def bind() -> bool:
    """Take Django's default database wrapper (for its operations, never a connection);
    False when it is not PostgreSQL with psycopg 3, which the fast path then leaves to
    Django."""
    global _wrapper
    wrapper = connections["default"]
    if wrapper.vendor != "postgresql" or not getattr(wrapper, "is_psycopg3", True):
        return False
    _wrapper = wrapper
    return True


def bound() -> bool:
    return _wrapper is not None


async def _configure(conn: Any) -> None:
    await conn.execute("SET synchronous_commit TO OFF")


async def pool() -> Any:
    """This event loop's pool, opened on first use."""
    loop = asyncio.get_running_loop()
    found = _pools.get(loop)
    if found is None:
        import psycopg
        from psycopg_pool import AsyncConnectionPool

        params = dict(_wrapper.get_connection_params())
        params["cursor_factory"] = psycopg.AsyncCursor  # server-side binding: no quoting here
        params["autocommit"] = True
        if "prepare_threshold" not in _wrapper.settings_dict.get("OPTIONS", {}):
            # Django leaves statements unprepared unless told (for poolers such as
            # PgBouncer in transaction mode); these sessions prepare theirs at once
            # (0.37 ms less per REST execute, docs/benchmarks.md) unless turned off.
            params["prepare_threshold"] = 0 if settings.STUDIO_DB_PREPARE else None
        found = AsyncConnectionPool(
            kwargs=params, min_size=1, max_size=POOL_SIZE, configure=_configure, open=False
        )
        _pools[loop] = found
        await found.open()
    return found


async def close() -> None:
    """Close this event loop's pool (a loop that ends before its process: tests)."""
    found = _pools.pop(asyncio.get_running_loop(), None)
    if found is not None:
        await found.close()


async def fetch_one(sql: str, params: Sequence[Any]) -> tuple[Any, ...] | None:
    async with (await pool()).connection() as conn, conn.cursor() as cursor:
        await cursor.execute(sql, params)
        return await cursor.fetchone()


async def execute(sql: str, params: Sequence[Any]) -> None:
    async with (await pool()).connection() as conn:
        await conn.execute(sql, params)


def quote(name: str) -> str:
    return _wrapper.ops.quote_name(name)


def columns(model: type[Model], alias: str) -> str:
    """`alias."col", ...` of the model's concrete fields, in their order."""
    return ", ".join(f"{alias}.{quote(f.column)}" for f in model._meta.concrete_fields)


def instance(model: type[Model], values: Sequence[Any]) -> Model:
    """A model instance from its concrete fields' values as selected by `columns`."""
    converted = []
    for field, value in zip(model._meta.concrete_fields, values, strict=True):
        for converter in field.get_db_converters(_wrapper):
            value = converter(value, field, _wrapper)  # noqa: PLW2901
        converted.append(value)
    return model.from_db("default", None, converted)


def insert(obj: Model, *, ignore_conflicts: bool = False) -> tuple[str, list[Any]]:
    """The INSERT of an unsaved instance, as Django's save() would write it (an auto
    primary key is left to the database); `ignore_conflicts`: ON CONFLICT DO NOTHING."""
    sql, fields = _insert_sql(type(obj), ignore_conflicts)
    params = [f.get_db_prep_save(f.pre_save(obj, True), connection=_wrapper) for f in fields]
    return sql, params


@cache
def _insert_sql(model: type[Model], ignore_conflicts: bool) -> tuple[str, list[Any]]:
    fields = [
        f
        for f in model._meta.local_concrete_fields
        if not (f.primary_key and getattr(f, "db_returning", False)) and not f.generated
    ]
    names = ", ".join(quote(f.column) for f in fields)
    marks = ", ".join(["%s"] * len(fields))
    tail = " ON CONFLICT DO NOTHING" if ignore_conflicts else ""
    # Names from the model's meta, quoted; every value is a parameter.
    table = quote(model._meta.db_table)
    return f"INSERT INTO {table} ({names}) VALUES ({marks}){tail}", fields  # noqa: S608


def insert_together(rows: Sequence[tuple[str, list[Any]]]) -> tuple[str, list[Any]]:
    """One statement that runs every INSERT (data-modifying CTEs): one round trip, one
    implicit transaction, all or none."""
    if len(rows) == 1:
        return rows[0]
    parts = [f"w{index} AS ({sql})" for index, (sql, _) in enumerate(rows)]
    params = [param for _, row_params in rows for param in row_params]
    return "WITH " + ", ".join(parts) + " SELECT 1", params
