"""What a thread's websocket asks of its thread besides a chat message (docs/protocol.md):
whether it may open, an answer to a suspended call, a client tool's result, an abort.
Each checks that `user` owns the thread; the websocket consumer calls them in a thread."""

from __future__ import annotations

from typing import Any

from agents_core.models import Run, RunStatus
from agents_core.selectors import thread_for, threads_for
from agents_core.services import runs as run_services
from common.exceptions import ApplicationError


def thread_stored_seq(user: Any, thread_id: Any) -> int | None:
    """The thread's last stored seq, or None when the socket may not open (missing and
    someone else's are not told apart)."""
    return threads_for(user).filter(pk=thread_id).values_list("last_seq", flat=True).first()


def _suspended_run_of_call(user: Any, thread_id: Any, tool_call_id: str) -> Run:
    thread = thread_for(user, thread_id)
    run = (
        Run.objects.filter(thread=thread, tool_calls__call_id=tool_call_id)
        .order_by("-created_at")
        .first()
    )
    if run is None:
        raise ApplicationError("No such tool call on this thread.", code="not_found")
    if run.status != RunStatus.SUSPENDED:
        raise ApplicationError("This call is not waiting for an answer.", code="not_suspended")
    return run


def call_resume(user: Any, thread_id: Any, tool_call_id: str, payload: Any) -> None:
    run = _suspended_run_of_call(user, thread_id, tool_call_id)
    run_services.run_resume(run=run, tool_call_id=tool_call_id, payload=payload, user=user)


def call_client_result(
    user: Any, thread_id: Any, tool_call_id: str, output: Any, error: str | None
) -> None:
    run = _suspended_run_of_call(user, thread_id, tool_call_id)
    run_services.client_tool_result(
        run=run, tool_call_id=tool_call_id, output=output, error=error, user=user
    )


def thread_run_abort(user: Any, thread_id: Any) -> None:
    thread = thread_for(user, thread_id)
    run = run_services.thread_active_run(thread=thread, suspended=True)
    if run is None:
        raise ApplicationError("Nothing is running on this thread.", code="not_running")
    run_services.run_abort(run=run, user=user)
