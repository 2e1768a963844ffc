"""Running an agent from Python: `agent_generate` (the "agent as tool" type) and the
nested run of a sub-agent (`agent-<key>` tools)."""

from __future__ import annotations

import asyncio
from typing import Any

from django.db import transaction

from agents_core.models import Agent, Message, MessageRole, Run, RunStatus, Thread
from agents_core.runtime import observers
from agents_core.runtime.db import db


def _start_nested(
    *, agent: Agent, prompt: str, user: Any, metadata: dict[str, Any]
) -> tuple[Thread, Run]:
    """A fresh thread with the prompt and a run ready to execute (not launched: the
    caller awaits it inline)."""
    with transaction.atomic():
        thread = Thread.objects.create(
            agent=agent, owner=user, resource_id=str(user.pk), title=prompt[:80], metadata=metadata
        )
        run = Run.objects.create(
            thread=thread,
            agent=agent,
            status=RunStatus.RUNNING,
            started_by=user,
            state={"message": prompt},
        )
        Message.objects.create(
            thread=thread, run=run, role=MessageRole.USER, parts=[{"type": "text", "text": prompt}]
        )
    return thread, run


async def subagent_run(
    *,
    child: Agent,
    prompt: str,
    user: Any,
    parent_thread_id: Any,
    parent_run_id: Any,
    tool_call_id: str,
    abort: asyncio.Event | None = None,
) -> tuple[Any, Any, Any]:
    """Run a sub-agent to its end on its own thread (its events stream there, tagged
    with the parent in the thread's metadata); returns (RunResult, thread id, run id)."""
    from agents_core.runtime.loop import execute_run

    thread, run = await db(
        _start_nested,
        agent=child,
        prompt=prompt,
        user=user,
        metadata={
            "parentThreadId": str(parent_thread_id),
            "parentRunId": str(parent_run_id),
            "parentToolCallId": tool_call_id,
        },
    )
    observers.notify(
        "child_run_started", str(parent_run_id), child_run_id=str(run.id), call_id=tool_call_id
    )
    result = await execute_run(run.id, abort=abort)
    return result, thread.pk, run.pk


async def agent_generate(*, agent: Agent, prompt: str, user: Any) -> str:
    """Run `agent` to completion on a fresh thread and return its answer."""
    from agents_core.runtime.loop import execute_run

    _, run = await db(
        _start_nested,
        agent=agent,
        prompt=prompt,
        user=user,
        metadata={"generatedBy": "agent_generate"},
    )
    result = await execute_run(run.id)
    if result.status != RunStatus.COMPLETED:
        reason = result.error or f"the run ended as {result.status}"
        raise RuntimeError(f"Agent {agent.slug!r} did not answer: {reason}")
    return result.text
