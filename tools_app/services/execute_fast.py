"""REST execute on the event loop: what `POST /api/tools/<name>/execute` does with a
token (tools_app.services.execute through DRF), in two round trips to PostgreSQL and no
thread for a tool that runs inline.

1. One SELECT finds the token's active user and the tool by name among those the user
   may run (`ToolQuerySet.live().visible_to(user)`, written out below). No row: the
   request goes on to Django, which answers it as always (401, 404).
2. The run goes through the same pipeline (`await run_tool`, as the agent loop calls
   it: a fast sync code tool inline, anything else awaited or in a thread).
3. One statement writes the run's row and what the run observers would write (its trace
   span), in autocommit with `synchronous_commit` off (tools_app.async_db). Should that
   statement fail, the row is written alone: an observer never loses the run.

`tool_execute_fast` answers None, before anything ran, for whatever it leaves to Django:
no such token or tool, an async run, an observer that cannot give its rows.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Any

from django.contrib.auth import get_user_model
from rest_framework.authtoken.models import Token

from tools_app import async_db, observers
from tools_app.execution import ExecutionContext, ToolOutcome, run_tool
from tools_app.models import ExecutionMode, Source, Tool, ToolRun, ToolRunStatus
from tools_app.records import tool_run_new
from tools_app.services.runs import tool_run_data

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class Answer:
    status: int
    body: dict[str, Any]


def _resolve_sql() -> str:
    user_model = get_user_model()
    user_pk = async_db.quote(user_model._meta.pk.column)
    active = " AND u.is_active" if hasattr(user_model, "is_active") else ""
    q = async_db.quote
    # Names from the models' meta, quoted; every value is a parameter.
    return (
        f"SELECT {async_db.columns(user_model, 'u')}, {async_db.columns(Tool, 't')} "  # noqa: S608
        f"FROM {q(Token._meta.db_table)} k "
        f"JOIN {q(user_model._meta.db_table)} u ON u.{user_pk} = k.{q('user_id')} "
        f"JOIN {q(Tool._meta.db_table)} t ON t.{q('name')} = %s AND t.{q('gone_at')} IS NULL "
        f"AND (t.{q('source')} = %s OR t.{q('owner_id')} = u.{user_pk}) "
        f"WHERE k.{q('key')} = %s{active}"
    )


_sql: str | None = None


async def caller_and_tool(*, key: str, name: str) -> tuple[Any, Tool] | None:
    """The active user of a token and the tool `name` they may run, in one query."""
    global _sql
    if _sql is None:
        _sql = _resolve_sql()
    row = await async_db.fetch_one(_sql, [name, Source.CODE, key])
    if row is None:
        return None
    user_model = get_user_model()
    width = len(user_model._meta.concrete_fields)
    user = async_db.instance(user_model, row[:width])
    tool = async_db.instance(Tool, row[width:])
    return user, tool  # type: ignore[return-value]


async def tool_execute_fast(
    *,
    key: str,
    name: str,
    input: Any,  # noqa: A002
    mode: str | None = None,
) -> Answer | None:
    """The REST execute answer (200, or 400 for an input the schema refuses, each with
    its recorded run), or None to leave the request to Django."""
    if mode not in (None, ExecutionMode.SYNC) or not observers.rows_offered():
        return None
    try:
        found = await caller_and_tool(key=key, name=name)
    except Exception:  # noqa: BLE001 - nothing ran yet: Django answers, with its own errors
        logger.exception("REST execute's fast path could not read the token and the tool")
        return None
    if found is None:
        return None
    user, tool = found
    if mode is None and tool.execution_mode != ExecutionMode.SYNC:
        return None
    outcome = await run_tool(tool, input, ExecutionContext(user=user))
    if outcome.input_rejected:
        outcome = ToolOutcome(
            status=ToolRunStatus.FAILED, error=outcome.error, errors=outcome.errors
        )
        run = await _recorded(tool, input, outcome, user)
        body = tool_run_data(run)
        return Answer(400, {"detail": run.error, "code": "invalid_input", **body})
    run = await _recorded(tool, input, outcome, user)
    return Answer(200, tool_run_data(run))


async def _recorded(tool: Tool, stored: Any, outcome: ToolOutcome, user: Any) -> ToolRun:
    run = tool_run_new(tool=tool, input=stored, outcome=outcome, user=user, mode=ExecutionMode.SYNC)
    row = async_db.insert(run)
    extra = [async_db.insert(obj, ignore_conflicts=True) for obj in observers.tool_run_rows(run)]
    if not extra:
        await async_db.execute(*row)
        return run
    try:
        await async_db.execute(*async_db.insert_together([row, *extra]))
    except Exception:  # noqa: BLE001 - an observer's row must not lose the run's
        logger.exception("Tool run %s: its observers' rows could not be written", run.id)
        await async_db.execute(*row)
    return run
