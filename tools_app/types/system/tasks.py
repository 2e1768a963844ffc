"""The task tools: `task_write`, `task_update`, `task_complete`, `task_check`.

They keep the chat thread's task list with one task in progress at most; a call that
would break the rule is a tool error the model sees. The list itself is stored by the
agent side (`context.side.task_list(thread id)`, tools_app.agent_side.TaskList), which
also holds the rule as a database constraint. After each of their results the run emits
the thread's list as a `task-list` event (their `result_events` hook, `list_event`).
"""

from __future__ import annotations

from typing import Any

from tools_app.agent_side import TaskList
from tools_app.definitions import create_tool
from tools_app.errors import ToolError

PENDING, IN_PROGRESS, COMPLETED = "pending", "in_progress", "completed"
STATUSES = [PENDING, IN_PROGRESS, COMPLETED]
_TASK = {
    "type": "object",
    "properties": {
        "title": {"type": "string", "minLength": 1, "maxLength": 300},
        "status": {"type": "string", "enum": STATUSES, "default": "pending"},
        "notes": {"type": "string"},
    },
    "required": ["title"],
    "additionalProperties": False,
}
_LIST_OUTPUT = {
    "type": "object",
    "properties": {"tasks": {"type": "array"}, "summary": {"type": "object"}},
    "required": ["tasks"],
}
ONE_IN_PROGRESS = "At most one task can be in progress at a time."


def _tasks(context: Any) -> TaskList:
    thread = getattr(context, "thread", None)
    if thread is None:
        raise ToolError("Task tools keep a thread's task list; they only run inside a chat.")
    side = getattr(context, "side", None)
    if side is None:
        raise ToolError("Task tools need the agent runtime's task list, which is not installed.")
    return side.task_list(thread.pk)


def _result(tasks: TaskList) -> dict[str, Any]:
    items = tasks.items()
    summary = {status: sum(1 for t in items if t["status"] == status) for status in STATUSES}
    return {"tasks": items, "summary": {"total": len(items), **summary}}


def list_event(context: Any) -> list[dict[str, Any]]:
    """The chat's `task-list` event: the thread's list as it is after the call."""
    return [{"type": "task-list", "tasks": _tasks(context).items()}]


def write(input: dict[str, Any], context: Any = None) -> dict[str, Any]:  # noqa: A002
    tasks = _tasks(context)
    items = input["tasks"]
    if [item.get("status", PENDING) for item in items].count(IN_PROGRESS) > 1:
        raise ToolError(ONE_IN_PROGRESS)
    tasks.replace(
        [
            {
                "title": item["title"],
                "notes": item.get("notes", ""),
                "status": item.get("status", PENDING),
                "position": index,
            }
            for index, item in enumerate(items)
        ]
    )
    return _result(tasks)


def _task(tasks: TaskList, task_id: int) -> dict[str, Any]:
    items = tasks.items()
    task = next((item for item in items if item["id"] == task_id), None)
    if task is None:
        known = [item["id"] for item in items]
        raise ToolError(f"No task {task_id} in this thread (tasks: {known}).")
    return task


def _save(tasks: TaskList, task: dict[str, Any], changes: dict[str, Any]) -> None:
    if changes.get("status", task["status"]) == IN_PROGRESS:
        other = next(
            (
                item
                for item in tasks.items()
                if item["status"] == IN_PROGRESS and item["id"] != task["id"]
            ),
            None,
        )
        if other is not None:
            raise ToolError(
                f"Task {other['id']} ({other['title']!r}) is already in progress; complete it "
                "(task_complete) or set it back to pending first."
            )
    if not tasks.save(task["id"], changes):
        # Two calls raced past the check above; the store's constraint decided.
        raise ToolError(ONE_IN_PROGRESS)


def update(input: dict[str, Any], context: Any = None) -> dict[str, Any]:  # noqa: A002
    tasks = _tasks(context)
    task = _task(tasks, input["id"])
    _save(
        tasks, task, {name: input[name] for name in ("title", "status", "notes") if name in input}
    )
    return _result(tasks)


def complete(input: dict[str, Any], context: Any = None) -> dict[str, Any]:  # noqa: A002
    tasks = _tasks(context)
    task = _task(tasks, input["id"])
    if task["status"] == COMPLETED:
        raise ToolError(f"Task {task['id']} ({task['title']!r}) is already completed.")
    _save(tasks, task, {"status": COMPLETED})
    return _result(tasks)


def check(input: dict[str, Any], context: Any = None) -> dict[str, Any]:  # noqa: A002
    return _result(_tasks(context))


task_write = create_tool(
    id="task_write",
    kind="system",
    description="Write the task list of this conversation (replaces it). At most one task "
    "may be in_progress.",
    input_schema={
        "type": "object",
        "properties": {"tasks": {"type": "array", "items": _TASK, "minItems": 1}},
        "required": ["tasks"],
        "additionalProperties": False,
    },
    output_schema=_LIST_OUTPUT,
    execute=write,
    result_events=list_event,
)
_ID = {"type": "integer", "description": "The task's id (from the task list)."}
task_update = create_tool(
    id="task_update",
    kind="system",
    description="Change a task's title, notes or status (pending, in_progress, completed). "
    "Only one task may be in progress.",
    input_schema={
        "type": "object",
        "properties": {
            "id": _ID,
            "title": _TASK["properties"]["title"],
            "status": {"type": "string", "enum": STATUSES},
            "notes": {"type": "string"},
        },
        "required": ["id"],
        "additionalProperties": False,
    },
    output_schema=_LIST_OUTPUT,
    execute=update,
    result_events=list_event,
)
task_complete = create_tool(
    id="task_complete",
    kind="system",
    description="Mark a task completed.",
    input_schema={
        "type": "object",
        "properties": {"id": _ID},
        "required": ["id"],
        "additionalProperties": False,
    },
    output_schema=_LIST_OUTPUT,
    execute=complete,
    result_events=list_event,
)
task_check = create_tool(
    id="task_check",
    kind="system",
    description="Read the task list and how many tasks are pending, in progress, completed.",
    input_schema={"type": "object", "properties": {}, "additionalProperties": False},
    output_schema=_LIST_OUTPUT,
    execute=check,
    result_events=list_event,
)
