"""The task tools: `task_write`, `task_update`, `task_complete`, `task_check`.

They keep the thread's task list (agents_core.models.TaskItem) with one task in progress
at most; a call that would break the rule is a tool error the model sees. After each of
them the run emits a `task-list` event (their config says `emits: task-list`).
"""

from __future__ import annotations

from typing import Any

from django.db import IntegrityError, transaction

from agents_core.definitions import create_tool
from agents_core.models import TaskItem, TaskStatus

STATUSES = [choice.value for choice in TaskStatus]
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
CONFIG = {"emits": "task-list"}


def _error(message: str) -> Exception:
    from tools_app.execution import ToolError

    return ToolError(message)


def _thread_id(context: Any) -> Any:
    thread = getattr(context, "thread", None)
    if thread is None:
        raise _error("Task tools keep a thread's task list; they only run inside a chat.")
    return thread.pk


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


def _result(thread_id: Any) -> dict[str, Any]:
    tasks = task_list_data(thread_id)
    summary = {status: sum(1 for t in tasks if t["status"] == status) for status in STATUSES}
    return {"tasks": tasks, "summary": {"total": len(tasks), **summary}}


def _in_progress_rule(statuses: list[str]) -> None:
    if statuses.count(TaskStatus.IN_PROGRESS) > 1:
        raise _error("At most one task can be in progress at a time.")


def write(input: dict[str, Any], context: Any = None) -> dict[str, Any]:  # noqa: A002
    thread_id = _thread_id(context)
    items = input["tasks"]
    _in_progress_rule([item.get("status", "pending") for item in items])
    with transaction.atomic():
        TaskItem.objects.filter(thread_id=thread_id).delete()
        TaskItem.objects.bulk_create(
            [
                TaskItem(
                    thread_id=thread_id,
                    title=item["title"],
                    notes=item.get("notes", ""),
                    status=item.get("status", "pending"),
                    position=index,
                )
                for index, item in enumerate(items)
            ]
        )
    return _result(thread_id)


def _task(thread_id: Any, task_id: int) -> TaskItem:
    task = TaskItem.objects.filter(thread_id=thread_id, id=task_id).first()
    if task is None:
        known = list(TaskItem.objects.filter(thread_id=thread_id).values_list("id", flat=True))
        raise _error(f"No task {task_id} in this thread (tasks: {known}).")
    return task


def _save(thread_id: Any, task: TaskItem) -> None:
    if task.status == TaskStatus.IN_PROGRESS:
        other = (
            TaskItem.objects.filter(thread_id=thread_id, status=TaskStatus.IN_PROGRESS)
            .exclude(id=task.id)
            .first()
        )
        if other is not None:
            raise _error(
                f"Task {other.id} ({other.title!r}) is already in progress; complete it "
                "(task_complete) or set it back to pending first."
            )
    try:
        with transaction.atomic():
            task.save()
    except IntegrityError:
        # Two calls raced past the check above; the database constraint decides.
        raise _error("At most one task can be in progress at a time.") from None


def update(input: dict[str, Any], context: Any = None) -> dict[str, Any]:  # noqa: A002
    thread_id = _thread_id(context)
    task = _task(thread_id, input["id"])
    for name in ("title", "status", "notes"):
        if name in input:
            setattr(task, name, input[name])
    _save(thread_id, task)
    return _result(thread_id)


def complete(input: dict[str, Any], context: Any = None) -> dict[str, Any]:  # noqa: A002
    thread_id = _thread_id(context)
    task = _task(thread_id, input["id"])
    if task.status == TaskStatus.COMPLETED:
        raise _error(f"Task {task.id} ({task.title!r}) is already completed.")
    task.status = TaskStatus.COMPLETED
    _save(thread_id, task)
    return _result(thread_id)


def check(input: dict[str, Any], context: Any = None) -> dict[str, Any]:  # noqa: A002
    return _result(_thread_id(context))


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
    config=CONFIG,
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
    config=CONFIG,
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
    config=CONFIG,
)
task_check = create_tool(
    id="task_check",
    kind="system",
    description="Read the task list and how many tasks are pending, in progress, completed.",
    input_schema={"type": "object", "properties": {}, "additionalProperties": False},
    output_schema=_LIST_OUTPUT,
    execute=check,
    config=CONFIG,
)
