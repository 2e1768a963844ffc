"""The ToolRun row a synchronous run leaves: one INSERT with the outcome, and the isolation
mode kept as the first log line."""

from __future__ import annotations

from typing import Any

from django.db import connection
from django.utils import timezone

from tools_app.models import Tool, ToolRun, ToolRunStatus

ISOLATION_PREFIX = "[sandbox] isolation="
WAITS_FOR_A_PERSON = "This tool waits for a person's answer; it completes in the preview chat."


def tool_run_record(
    *,
    tool: Tool,
    input: Any,  # noqa: A002
    outcome: Any,  # tools_app.execution.ToolOutcome
    user: Any,
    mode: str,
    tool_call: Any = None,
) -> ToolRun:
    run = tool_run_new(
        tool=tool, input=input, outcome=outcome, user=user, mode=mode, tool_call=tool_call
    )
    # One INSERT: atomic by itself (an explicit transaction would only add round trips).
    run.save(force_insert=True)
    return run


def tool_run_new(
    *,
    tool: Tool,
    input: Any,  # noqa: A002
    outcome: Any,
    user: Any,
    mode: str,
    tool_call: Any = None,
) -> ToolRun:
    """The row of a finished synchronous run, not saved yet (`tool_run_record` saves it)."""
    now = timezone.now()
    return ToolRun(
        tool=tool,
        mode=mode,
        input=input,
        **outcome_fields(outcome),
        attempts=1,
        # The run loop passes the ToolCall row or its primary key.
        tool_call_id=getattr(tool_call, "pk", tool_call),
        created_by=user if getattr(user, "is_authenticated", False) else None,
        started_at=now,
        finished_at=now,
    )


def relaxed_commit() -> None:
    """Let the COMMIT of the current transaction return before PostgreSQL has flushed its
    WAL to disk (synchronous_commit off, for this transaction only). The transaction stays
    atomic and its rows are seen by every reader at once; what it trades is that a crash
    of the database server itself (not of the studio) within about 0.6 s of the commit
    (three wal_writer_delay) may lose it. A console tool run's row and span take that
    trade: flushing costs more than the whole run (0.2 ms on an idle disk, several ms
    when other work writes)."""
    with connection.cursor() as cursor:
        cursor.execute("SET LOCAL synchronous_commit TO OFF")


def outcome_fields(outcome: Any) -> dict[str, Any]:
    """The ToolRun columns of an outcome. Outside a chat nobody can answer a suspended
    tool: its run fails and shows what the tool would have asked."""
    status, error, output = outcome.status, outcome.error, outcome.output
    if outcome.status == "suspended":
        status, output, error = ToolRunStatus.FAILED, outcome.suspend_payload, WAITS_FOR_A_PERSON
    return {
        "status": status,
        "output": output,
        "model_output": outcome.model_output,
        "error": error,
        "errors": outcome.errors,
        "logs": logs_with_isolation(outcome),
        "duration_ms": outcome.duration_ms,
    }


def logs_with_isolation(outcome: Any) -> str:
    # ToolRun has no isolation column; the sandbox mode is the first log line so that the
    # console and the API can show which isolation ran (tool_run_data parses it back).
    if outcome.isolation:
        return f"{ISOLATION_PREFIX}{outcome.isolation}\n{outcome.logs}"
    return outcome.logs
