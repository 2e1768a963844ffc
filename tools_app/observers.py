"""The console runs' observer seam: a tool run from the test console, REST or the CLI (a
ToolRun that serves no chat call) has finished, for whoever listens.

`tool_run_finished(run)` is called once per run, when its outcome is recorded: right after
the row of a synchronous run is written, in the transaction that writes it (what an
observer writes commits with the row), and after the commit that finishes an async run
(its worker, its attempts). Each observer runs in an atomic block of its own: a
transaction after an async run's commit; in the synchronous run's transaction no
savepoint (two round trips per run), so a database error of an observer (which writes
through the ORM) marks that transaction for rollback and `tool_execute` writes the row
again alone: it never loses the row.
An observer is an object with a method `tool_run_finished(**facts)`; the studio's
tracing registers one (`traces`), and tools_app never imports its observers. With none
registered the call is one test of an empty list: the facts (input and output through
the tool's display transform) are only computed for a listener.

Observers must not break a run: their exceptions are logged and swallowed.
"""

from __future__ import annotations

import logging
from datetime import timedelta
from typing import Any

from django.db import DatabaseError, transaction

from tools_app.definitions import display_value
from tools_app.execution import tool_definition
from tools_app.models import ToolRun
from tools_app.records import ISOLATION_PREFIX

logger = logging.getLogger(__name__)

_observers: list[Any] = []


def register(observer: Any) -> None:
    if observer not in _observers:
        _observers.append(observer)


def unregister(observer: Any) -> None:
    if observer in _observers:
        _observers.remove(observer)


def tool_run_finished(run: ToolRun, *, savepoint: bool = True) -> None:
    """Tell every observer about a finished console run (a chat's runs are traced by the
    agent run they serve). `savepoint=False` inside a transaction: an observer runs in it
    as it is, and a database error of one marks it for rollback (the caller reads
    `transaction.get_rollback()`); any other error of one is only logged."""
    if not _observers or run.tool_call_id is not None:
        return
    try:
        facts = run_facts(run)
    except Exception:  # noqa: BLE001 - observing a run never fails it
        logger.exception("Could not describe tool run %s for its observers", run.id)
        return
    for observer in _observers:
        try:
            if savepoint:
                with transaction.atomic():
                    observer.tool_run_finished(**facts)
            else:
                observer.tool_run_finished(**facts)
        except DatabaseError:
            if not savepoint:
                transaction.set_rollback(True)
            logger.exception("Tool run observer %r failed on run %s", observer, run.id)
        except Exception:  # noqa: BLE001
            logger.exception("Tool run observer %r failed on run %s", observer, run.id)


def run_facts(run: ToolRun) -> dict[str, Any]:
    """What the trace shows of a run: the input and output as the chat would show them
    (through a code tool's display transform; a failing transform hides the value), the
    model's view when there is no transform, timing, isolation, worker and attempts."""
    transform = getattr(tool_definition(run.tool), "transform", None)
    logs = run.logs or ""
    isolation = None
    if logs.startswith(ISOLATION_PREFIX):
        isolation = logs.partition("\n")[0][len(ISOLATION_PREFIX) :]
    end = run.finished_at or run.created_at
    # A synchronous run's row is written once, after the tool ran: its start is its end
    # less the tool's duration.
    start = run.started_at if run.mode == "async" and run.started_at else None
    if start is None:
        start = end - timedelta(milliseconds=run.duration_ms or 0)
    return {
        "run_id": str(run.id),
        "name": run.tool.name,
        "tool_kind": run.tool.kind,
        "mode": run.mode,
        "status": run.status,
        "input": _shown(transform, run.input, "input", run.tool.name),
        "output": _shown(transform, run.output, "output", run.tool.name),
        "model_output": run.model_output if transform is None else None,
        "error": run.error,
        "errors": run.errors,
        "isolation": isolation,
        "duration_ms": run.duration_ms,
        "worker": run.worker if run.mode == "async" else None,
        "attempts": run.attempts,
        "start": start,
        "end": end,
    }


def _shown(transform: Any, value: Any, phase: str, name: str) -> Any:
    if transform is None or value is None:
        return value
    return display_value(transform, value, phase, name)[0]
