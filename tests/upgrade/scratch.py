"""A throwaway database that stands in for the default database within a test.

The upgrade test builds a release's schema in it from an empty database, forwards only,
as that release's own `studio migrate` did. The shared test database is never taken back
to an old schema: a test stopped half way (a failure, a timeout, Ctrl-C) would leave it
there for every later run of `--reuse-db`, and a data migration with no way back (a
RunPython without reverse code) could not be undone at all.

It is the *default* connection while it lasts, not another alias: data migrations write
through `apps.get_model(...).objects`, which goes to the default database.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from django.db import DEFAULT_DB_ALIAS, connections


def _drop(name: str) -> None:
    test_db = connections[DEFAULT_DB_ALIAS]
    with test_db._nodb_cursor() as cursor:
        cursor.execute(f"DROP DATABASE IF EXISTS {test_db.ops.quote_name(name)}")


@contextmanager
def scratch_default_database(suffix: str) -> Iterator[None]:
    """An empty PostgreSQL database, named after the test database, as `default`."""
    test_db = connections[DEFAULT_DB_ALIAS]
    name = f"{test_db.settings_dict['NAME']}_{suffix}"
    _drop(name)  # left over by a run that was killed
    with test_db._nodb_cursor() as cursor:
        cursor.execute(f"CREATE DATABASE {test_db.ops.quote_name(name)}")
    # One plain connection (no pool), for this thread only; the test database's own
    # connection object comes back untouched afterwards.
    options = {k: v for k, v in test_db.settings_dict["OPTIONS"].items() if k != "pool"}
    scratch = type(test_db)(
        {**test_db.settings_dict, "NAME": name, "OPTIONS": options}, DEFAULT_DB_ALIAS
    )
    connections[DEFAULT_DB_ALIAS] = scratch
    try:
        yield
    finally:
        connections[DEFAULT_DB_ALIAS] = test_db
        scratch.close()
        _drop(name)
