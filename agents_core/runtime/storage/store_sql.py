"""A run's most frequent statements written without the ORM (PostgreSQL).

Every run starts with its row, its first message and maybe the thread's title; every model
step creates its message, reads the thread's memory, then saves the message with its tool
calls and the run's step; every tool call saves its result and the transcript's message.
Through the ORM these were transactions of two to six statements, and most of their CPU
was Django building the statements and model instances (docs/benchmarks.md, "Run start
and end"). Here each write is one statement, atomic alone (its parts are data-modifying
CTEs), and the memory is read as plain rows, through Django's cursor (so they are counted
as any other statement). Values are encoded as the models' fields encode them: JSON with
NUL written as U+FFFD, NUL-free text. These are the only implementations of these writes
and reads; the columns each INSERT names are checked against the models
(tests/agents_core/runtime/test_sql_columns.py), so a column added to a model without its
place here fails the tests instead of the statement.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from django.db import connection
from django.utils import timezone

from agents_core.models import Message, MessageRole, Run, Thread, ToolCall, ToolCallStatus
from common.fields import NulFreeJSONEncoder
from common.json_input import NUL, REPLACEMENT


def _json(value: Any) -> str | None:
    """A JSON field's value as the column gets it (None: SQL NULL, as the ORM writes)."""
    return None if value is None else json.dumps(value, cls=NulFreeJSONEncoder)


def _text(value: str) -> str:
    return value.replace(NUL, REPLACEMENT) if NUL in value else value


def _rows(sql: str, params: dict[str, Any] | list[Any]) -> list[tuple[Any, ...]]:
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        return cursor.fetchall() if cursor.description else []


# New runs with their first messages and the threads' placeholder titles, given as one
# JSON array of rows (one run per thread: the statement fails whole on a running run).
_RUNS_CREATE = """
WITH given AS (
    SELECT * FROM jsonb_to_recordset(%(rows)s::jsonb) AS g(id uuid, thread uuid,
        agent bigint, status text, options jsonb, state jsonb, started_by integer,
        worker text, role text, parts jsonb, title text)
), run AS (
    INSERT INTO {run} (id, thread_id, agent_id, status, options, step, state, error, usage,
        model, started_by_id, worker, created_at, finished_at)
    SELECT g.id, g.thread, g.agent, g.status, g.options, 0, g.state,
        '', '{{}}'::jsonb, '', g.started_by, g.worker, %(now)s, NULL
    FROM given g
), message AS (
    INSERT INTO {message} (thread_id, run_id, role, parts, created_at)
    SELECT g.thread, g.id, g.role, g.parts, %(now)s FROM given g
)
UPDATE {thread} t SET title = g.title, title_auto = true
FROM given g WHERE t.id = g.thread AND g.title IS NOT NULL
"""


def runs_create(rows: list[tuple[Run, str, dict[str, Any], str | None]]) -> None:
    """Insert new runs (unsaved instances, each on its own thread: their fields as
    run_rows.new_run set them), with each its first message (`part`, as `role`) and, when
    given, its thread's placeholder `title`. One statement; a running run on any of the
    threads fails them all (IntegrityError)."""
    now = timezone.now()
    given = [
        {
            "id": str(run.pk),
            "thread": str(run.thread_id),
            "agent": run.agent_id,
            "status": run.status,
            "options": run.options,
            "state": run.state,
            "started_by": run.started_by_id,
            "worker": run.worker,
            "role": role,
            "parts": [part],
            "title": title,
        }
        for run, role, part, title in rows
    ]
    sql = _RUNS_CREATE.format(
        run=Run._meta.db_table, message=Message._meta.db_table, thread=Thread._meta.db_table
    )
    _rows(sql, {"rows": json.dumps(given, cls=NulFreeJSONEncoder), "now": now})
    for run, _, _, _ in rows:
        run.created_at = now
        run._state.adding = False
        run._state.db = connection.alias


_MESSAGE_START = """
INSERT INTO {message} (thread_id, run_id, role, parts, created_at)
VALUES (%(thread)s::uuid, %(run)s::uuid, %(role)s, '[]'::jsonb, %(now)s)
RETURNING id
"""


def message_start(*, run_id: Any, thread_id: Any) -> int:
    """The step's assistant message, empty until the step is saved, created when the model
    call starts: whatever reaches the thread while the model streams (a finished async
    tool, a signal) is numbered after it, so the next model call sees it as new instead of
    as something it answered."""
    sql = _MESSAGE_START.format(message=Message._meta.db_table)
    params = {
        "thread": str(thread_id),
        "run": str(run_id),
        "role": MessageRole.ASSISTANT,
        "now": timezone.now(),
    }
    return int(_rows(sql, params)[0][0])


# The step's message (its parts, or deleted when the step produced nothing), its tool
# calls (in order), the run's step and model; returns the calls' ids, and the signals
# numbered between the memory the model read and the step's message (store.py moves them).
_STEP_SAVE = """
WITH message AS (
    UPDATE {message} SET parts = %(parts)s::jsonb WHERE id = %(message)s AND %(keep)s
), emptied AS (
    DELETE FROM {message} WHERE id = %(message)s AND NOT %(keep)s
), calls AS (
    INSERT INTO {toolcall} (run_id, call_id, tool_name, tool_id, step, status, input_text,
        input, output, model_output, error, suspend_payload, resume_payload, hook_decisions,
        created_at, started_at, finished_at)
    SELECT %(run)s::uuid, c.call_id, c.tool_name, c.tool_id, %(step)s, %(status)s,
        c.input_text, c.input, NULL, NULL, '', NULL, NULL, '[]'::jsonb, %(now)s, %(now)s, NULL
    FROM ROWS FROM (jsonb_to_recordset(%(calls)s::jsonb) AS (call_id text, tool_name text,
        tool_id bigint, input_text text, input jsonb)) WITH ORDINALITY AS c(call_id,
        tool_name, tool_id, input_text, input, position)
    ORDER BY c.position
    RETURNING id, call_id
), run AS (
    UPDATE {run} SET step = %(step)s,
        model = CASE WHEN %(model)s = '' THEN model ELSE %(model)s END
    WHERE id = %(run)s::uuid
)
SELECT 'call', id, call_id FROM calls
UNION ALL
SELECT 'unseen', id, '' FROM {message}
WHERE %(upto)s::bigint IS NOT NULL AND thread_id = %(thread)s::uuid AND role = %(signal)s
    AND id > %(upto)s::bigint AND id < %(message)s
"""


def step_save(
    *,
    run_id: Any,
    thread_id: Any,
    step: int,
    parts: list[dict[str, Any]],
    calls: list[dict[str, Any]],
    message_id: int,
    memory_upto: int | None,
    model: str | None,
) -> tuple[dict[str, int], bool]:
    """Save a step in one statement: ({toolCallId: ToolCall pk}, whether signals committed
    between the memory read and the step's message wait to be moved after it)."""
    sql = _STEP_SAVE.format(
        message=Message._meta.db_table,
        toolcall=ToolCall._meta.db_table,
        run=Run._meta.db_table,
    )
    rows = [
        {
            "call_id": call["id"],
            "tool_name": call["name"],
            "tool_id": getattr(call.get("tool"), "pk", None),
            "input_text": _text(call["inputText"]),
            "input": call["input"],
        }
        for call in calls
    ]
    params = {
        "parts": _json(parts),
        "message": message_id,
        "keep": bool(parts),
        "calls": json.dumps(rows, cls=NulFreeJSONEncoder),
        "run": str(run_id),
        "thread": str(thread_id),
        "step": step,
        "status": ToolCallStatus.RUNNING,
        "now": timezone.now(),
        "model": model or "",
        "upto": memory_upto,
        "signal": MessageRole.SIGNAL,
    }
    found = _rows(sql, params)
    ids = {call_id: int(pk) for kind, pk, call_id in found if kind == "call"}
    return ids, any(kind == "unseen" for kind, _, _ in found)


_TOOL_RESULT = """
WITH call AS (
    UPDATE {toolcall} SET status = %(status)s, output = %(output)s::jsonb,
        model_output = %(model_output)s::jsonb, error = %(error)s, finished_at = %(finished)s,
        hook_decisions = COALESCE(%(hooks)s::jsonb, hook_decisions)
    WHERE id = %(call)s
)
INSERT INTO {message} (thread_id, run_id, role, parts, created_at)
VALUES (%(thread)s::uuid, %(run)s::uuid, %(role)s, %(parts)s::jsonb, %(now)s)
"""


def tool_result_save(
    *,
    run_id: Any,
    thread_id: Any,
    call_pk: int,
    fields: dict[str, Any],
    part: dict[str, Any],
) -> None:
    """Finish a tool call (`fields`, as store.tool_result_save computes them) and add its
    result `part` to the transcript, in one statement."""
    sql = _TOOL_RESULT.format(toolcall=ToolCall._meta.db_table, message=Message._meta.db_table)
    hooks = fields.get("hook_decisions")
    params = {
        "status": fields["status"],
        "output": _json(fields["output"]),
        "model_output": _json(fields["model_output"]),
        "error": _text(fields["error"]),
        "finished": fields["finished_at"],
        "hooks": None if hooks is None else _json(hooks),
        "call": call_pk,
        "thread": str(thread_id),
        "run": str(run_id),
        "role": MessageRole.TOOL,
        "parts": _json([part]),
        "now": timezone.now(),
    }
    _rows(sql, params)


@dataclass(frozen=True, slots=True)
class MemoryRow:
    """A message as the memory reads it (runtime/messages.memory_messages)."""

    pk: int
    role: str
    parts: list[dict[str, Any]]
    run_id: Any


@dataclass(frozen=True, slots=True)
class MemoryCall:
    """A tool call as the memory reads it: what the model saw and was answered."""

    run_id: Any
    call_id: str
    input: Any
    input_text: str
    model_output: Any


def _loaded(value: Any) -> Any:
    return json.loads(value) if isinstance(value, str) else value


def memory_rows(thread_id: Any, limit: int) -> list[MemoryRow]:
    """The thread's last `limit` messages, oldest first."""
    sql = (
        f"SELECT id, role, parts, run_id FROM {Message._meta.db_table} "  # noqa: S608
        "WHERE thread_id = %s::uuid ORDER BY id DESC LIMIT %s"
    )
    rows = _rows(sql, [str(thread_id), limit])
    return [MemoryRow(pk, role, _loaded(parts), run) for pk, role, parts, run in reversed(rows)]


def memory_calls(run_ids: set[Any]) -> list[MemoryCall]:
    """The tool calls of these runs, as the memory reads them."""
    if not run_ids:
        return []
    sql = (
        "SELECT run_id, call_id, input, input_text, model_output "  # noqa: S608
        f"FROM {ToolCall._meta.db_table} WHERE run_id = ANY(%s::uuid[])"
    )
    rows = _rows(sql, [[str(run) for run in run_ids]])
    return [
        MemoryCall(run, call_id, _loaded(given), text, _loaded(answer))
        for run, call_id, given, text, answer in rows
    ]
