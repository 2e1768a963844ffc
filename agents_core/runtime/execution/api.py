"""Running an agent from Python: `agent_generate`, and `nested_run`, the run on a thread
of its own behind every agent called as a tool (agents_core.tool_side). Each starts its
run on a fresh thread (`run_start`, origin `subagent`) and executes it inline, in the
calling task."""

from __future__ import annotations

import asyncio
from typing import Any

from django.db import transaction

from agents_core.models import Agent, Run, RunStatus, Thread
from agents_core.runtime.execution import active as active_runs
from agents_core.runtime.run import observers
from agents_core.runtime.storage.db import db
from agents_core.services.run_rows import SUBAGENT
from agents_core.services.runs import run_start


def _start_on_new_thread(
    *, agent: Agent, prompt: str, user: Any, metadata: dict[str, Any]
) -> tuple[Thread, Run]:
    with transaction.atomic():
        thread = Thread.objects.create(
            agent=agent, owner=user, resource_id=str(user.pk), title=prompt[:80], metadata=metadata
        )
        run = run_start(thread=thread, message=prompt, user=user, origin=SUBAGENT)
    return thread, run


async def nested_run(
    *,
    agent: Agent,
    prompt: str,
    user: Any,
    metadata: dict[str, Any],
    abort: asyncio.Event | None = None,
) -> tuple[Any, Any, Any]:
    """Run `agent` to its end on a fresh thread of its own (its events stream there;
    `metadata` names who asked); returns (RunResult, thread id, run id)."""
    thread, run = await db(
        _start_on_new_thread, agent=agent, prompt=prompt, user=user, metadata=metadata
    )
    if metadata.get("parentRunId"):
        # A run nested in a chat's tool call: its trace continues its parent's.
        observers.notify(
            "child_run_started",
            metadata["parentRunId"],
            child_run_id=str(run.id),
            call_id=metadata.get("parentToolCallId", ""),
        )
    result = await active_runs.execute(run.id, abort=abort)
    return result, thread.pk, run.pk


async def agent_generate(*, agent: Agent, prompt: str, user: Any) -> str:
    """Run `agent` to completion on a fresh thread and return its answer."""
    result, _, _ = await nested_run(
        agent=agent, prompt=prompt, user=user, metadata={"generatedBy": "agent_generate"}
    )
    if result.status != RunStatus.COMPLETED:
        reason = result.error or f"the run ended as {result.status}"
        raise RuntimeError(f"Agent {agent.slug!r} did not answer: {reason}")
    return result.text
