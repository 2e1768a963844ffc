"""What the agent side lends to tools (tools_app.agent_side.AgentSide), installed when
Django starts: code tool definitions from the registry, the one function that runs an
agent as a tool (an `agent` tool, a sub-agent binding, an A2A task), and the thread task
lists the task tools keep."""

from __future__ import annotations

from typing import Any

from django.db import IntegrityError, transaction
from django.utils import timezone

from agents_core.models import RunStatus, TaskItem
from agents_core.native_search import model_search
from agents_core.registry import get_tool_definition
from agents_core.runtime.storage.db import db
from agents_core.selectors import agent_get
from tools_app.agent_side import AgentSide
from tools_app.errors import ToolError


def task_list_data(thread_id: Any) -> list[dict[str, Any]]:
    return [
        {
            "id": task.id,
            "title": task.title,
            "status": task.status,
            "notes": task.notes,
            "position": task.position,
        }
        for task in TaskItem.objects.filter(thread_id=thread_id)
    ]


class ThreadTaskList:
    """A thread's TaskItem rows; the database keeps one task in progress per thread."""

    def __init__(self, thread_id: Any) -> None:
        self.thread_id = thread_id

    def items(self) -> list[dict[str, Any]]:
        return task_list_data(self.thread_id)

    @transaction.atomic
    def replace(self, items: list[dict[str, Any]]) -> None:
        TaskItem.objects.filter(thread_id=self.thread_id).delete()
        TaskItem.objects.bulk_create([TaskItem(thread_id=self.thread_id, **item) for item in items])

    def save(self, task_id: int, changes: dict[str, Any]) -> bool:
        try:
            with transaction.atomic():
                TaskItem.objects.filter(thread_id=self.thread_id, id=task_id).update(
                    **changes, updated_at=timezone.now()
                )
        except IntegrityError:
            return False
        return True


async def agent_run_as_tool(slug: str, prompt: str, context: Any) -> str:
    """Run the agent `slug` on a fresh thread to its answer, on behalf of the context's
    user. Called inside a chat, the nested thread names its parent call, and the tool
    result links to the nested thread and run."""
    from agents_core.runtime.execution.api import nested_run

    user = context.user
    if not getattr(user, "is_authenticated", False):
        # The nested run and its thread belong to a user.
        raise ToolError(
            "Agent-as-tool runs on behalf of a signed-in user (from the CLI, pass --user)."
        )
    agent = await db(agent_get, user=user, slug=slug)
    if agent is None:
        raise ToolError(f"No agent {slug!r} that this user can run.")
    metadata = {"generatedBy": "agent_tool"}
    if context.run is not None:
        metadata = {
            "parentThreadId": str(context.thread.pk),
            "parentRunId": str(context.run.pk),
            "parentToolCallId": context.call_id or "",
        }
    result, thread_id, run_id = await nested_run(
        agent=agent, prompt=prompt, user=user, metadata=metadata, abort=context.abort
    )
    context.links["subagent"] = {"agent": slug, "threadId": str(thread_id), "runId": str(run_id)}
    if result.status != RunStatus.COMPLETED:
        reason = result.error or f"the run ended as {result.status}"
        raise ToolError(f"agent-{slug} did not answer: {reason}")
    return result.text


AGENT_SIDE = AgentSide(
    tool_definition=get_tool_definition,
    run_agent=agent_run_as_tool,
    agent_get=lambda user, slug: agent_get(user=user, slug=slug),
    task_list=ThreadTaskList,
    model_search=model_search,
)
