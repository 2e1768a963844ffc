"""`tool_execute`: one tool run for REST and the CLI, always recorded as a ToolRun;
`mode="async"` records it pending and hands it to a Celery worker after commit. A
synchronous run is told to the run observers (tools_app/observers.py) in the transaction
that writes its row, so its trace span commits with it: one commit per run, which does
not wait for the disk (tools_app.records.relaxed_commit says what that trades)."""

from __future__ import annotations

from typing import Any

from django.db import transaction

from tools_app.errors import InputError
from tools_app.execution import ExecutionContext, ToolOutcome, run_tool_sync
from tools_app.models import ExecutionMode, Tool, ToolRun, ToolRunStatus
from tools_app.observers import tool_run_finished
from tools_app.records import relaxed_commit, tool_run_record
from tools_app.services.runs import tool_run_enqueue
from tools_app.validation import parse_input_text, validate_input


def tool_execute(
    *,
    tool: Tool,
    input: Any = None,  # noqa: A002
    user: Any = None,
    context: ExecutionContext | None = None,
    mode: str = "sync",
    input_text: str | None = None,
) -> ToolRun:
    """Run a tool for REST or the CLI and return its recorded ToolRun (never raises for a
    tool failure; an input error is a failed ToolRun with `errors`)."""
    if mode not in (ExecutionMode.SYNC, ExecutionMode.ASYNC):
        raise ValueError(f"mode must be 'sync' or 'async', not {mode!r}")
    context = context or ExecutionContext(user=user)
    context.user = context.user or user
    try:
        if input_text is not None:
            input = parse_input_text(input_text)  # noqa: A001
        if mode == ExecutionMode.ASYNC:
            # The worker's run_tool checks it again; a pending run must not be refused later.
            validate_input(tool.input_schema, input)
    except InputError as exc:
        stored = input if input_text is None else input_text
        return _rejected(tool, stored, exc.message, exc.errors, user, mode)
    if mode == ExecutionMode.ASYNC:
        return tool_run_enqueue(tool=tool, input=input, user=user)
    outcome = run_tool_sync(tool, input, context)
    if outcome.input_rejected:
        return _rejected(tool, input, outcome.error, outcome.errors, user, mode)
    return _recorded(tool, input, outcome, user, mode)


def _rejected(
    tool: Tool, stored: Any, error: str, errors: list[dict[str, str]], user: Any, mode: str
) -> ToolRun:
    outcome = ToolOutcome(status=ToolRunStatus.FAILED, error=error, errors=errors)
    run = _recorded(tool, stored, outcome, user, mode)
    run.input_rejected = True  # not a column: lets REST answer 400 for this response
    return run


def _recorded(tool: Tool, stored: Any, outcome: ToolOutcome, user: Any, mode: str) -> ToolRun:
    """The run's row and what its observers write, in one transaction with no savepoint;
    should an observer's write fail, that transaction is rolled back and the row is
    written alone."""
    with transaction.atomic():
        relaxed_commit()
        run = tool_run_record(tool=tool, input=stored, outcome=outcome, user=user, mode=mode)
        tool_run_finished(run, savepoint=False)
        observed = not transaction.get_rollback()
    if not observed:
        with transaction.atomic():
            relaxed_commit()
            run.save(force_insert=True)
    return run
