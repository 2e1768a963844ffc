"""Celery tasks of the runtime (imported by agents_core.agents so workers register them)."""

from __future__ import annotations

from celery import shared_task
from django.db import InterfaceError, OperationalError


@shared_task(
    name="agents_core.runtime.async_tool_execute",
    acks_late=True,
    reject_on_worker_lost=True,
    autoretry_for=(OperationalError, InterfaceError),
    retry_backoff=True,
    max_retries=3,
)
def async_tool_execute(tool_run_id: str) -> None:
    """Execute an async tool call of a run, then hand its result to the thread."""
    from agents_core.services.runs import tool_call_async_complete
    from tools_app.services.runs import tool_run_process

    tool_run_process(run_id=tool_run_id)
    tool_call_async_complete(tool_run_id=tool_run_id)
