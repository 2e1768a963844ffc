"""Code definitions the run-loop tests use (loaded through STUDIO_CODE_MODULES-style
registry building, also by the Celery worker process of the async-tool test)."""

from __future__ import annotations

from typing import Any

from agents_core.definitions import Agent, create_tool
from tools_app.types.system.tasks import task_check, task_complete, task_update, task_write
from tools_app.types.system.tools import ask_user, submit_plan

LIFECYCLE: list[tuple[str, Any]] = []


def _crash(data: dict[str, Any], context: Any = None) -> dict[str, Any]:
    raise RuntimeError(f"the disk is full while writing {data['name']}")


def _echo(data: dict[str, Any], context: Any = None) -> dict[str, Any]:
    return {"echo": data}


def _mask(value: Any, phase: str) -> Any:
    if isinstance(value, dict):
        return {key: ("***" if key == "password" else item) for key, item in value.items()}
    return value


def _broken(value: Any, phase: str) -> Any:
    raise ValueError("cannot display this")


rt_crash = create_tool(
    id="rt_crash",
    description="Writes a file (always crashes).",
    input_schema={
        "type": "object",
        "properties": {"name": {"type": "string"}},
        "required": ["name"],
    },
    execute=_crash,
)
rt_echo = create_tool(
    id="rt_echo",
    description="Echoes its input.",
    input_schema={
        "type": "object",
        "properties": {
            "text": {"type": "string"},
            "count": {"type": "integer", "minimum": 0},
            "blocked": {"type": "boolean"},
        },
        "required": ["text"],
    },
    execute=_echo,
    on_input_start=lambda info: LIFECYCLE.append(("start", info["toolCallId"])),
    on_input_delta=lambda info: LIFECYCLE.append(("delta", info["argsTextDelta"])),
    on_input_available=lambda info: LIFECYCLE.append(("available", info["input"])),
    on_output=lambda info: LIFECYCLE.append(("output", info["output"])),
    to_model_output=lambda output: {"echoed": output["echo"].get("text")},
)
rt_login = create_tool(
    id="rt_login",
    description="Signs in with a password.",
    input_schema={
        "type": "object",
        "properties": {"user": {"type": "string"}, "password": {"type": "string"}},
        "required": ["user", "password"],
    },
    execute=lambda data, context=None: {
        "user": data["user"],
        "password": data["password"],
        "ok": True,
    },
    transform=_mask,
)
rt_opaque = create_tool(
    id="rt_opaque",
    description="A tool whose display transform fails.",
    input_schema={
        "type": "object",
        "properties": {"secret": {"type": "string"}},
        "required": ["secret"],
    },
    execute=lambda data, context=None: {"stored": data["secret"]},
    transform=_broken,
)
rt_report = create_tool(
    id="rt_report",
    description="Writes a long report in the background.",
    execution_mode="async",
    input_schema={
        "type": "object",
        "properties": {"topic": {"type": "string"}},
        "required": ["topic"],
    },
    execute=lambda data, context=None: {"report": f"Report on {data['topic']}", "pages": 3},
)
rt_delete = create_tool(
    id="rt_delete",
    description="Deletes a record (needs approval).",
    input_schema={
        "type": "object",
        "properties": {"record": {"type": "string"}},
        "required": ["record"],
    },
    execute=lambda data, context=None: {"deleted": data["record"]},
    requires_approval=True,
)


def _before(info: dict[str, Any]) -> dict[str, Any] | None:
    if info["toolName"] == "rt_echo" and info["input"].get("blocked"):
        return {"proceed": False, "output": {"blocked": True}, "reason": "blocked by policy"}
    return None


def _after(info: dict[str, Any]) -> dict[str, Any] | None:
    if info["toolName"] == "rt_echo" and info["output"] is not None:
        return {"output": {**info["output"], "checked": True}}
    return None


rt_agent = Agent(
    id="rt-agent",
    name="Runtime test agent",
    instructions="Use your tools.",
    tools={
        "rt_crash": rt_crash,
        "rt_echo": rt_echo,
        "rt_login": rt_login,
        "rt_opaque": rt_opaque,
        "rt_report": rt_report,
        "rt_delete": rt_delete,
        "ask_user": ask_user,
        "submit_plan": submit_plan,
        "task_write": task_write,
        "task_update": task_update,
        "task_complete": task_complete,
        "task_check": task_check,
    },
    hooks={"before_tool_call": _before, "after_tool_call": _after},
    default_options={"maxSteps": 4},
)
rt_auto = Agent(
    id="rt-auto",
    name="Auto-resume agent",
    instructions="Ask when unsure.",
    tools={"ask_user": ask_user, "rt_delete": rt_delete},
    default_options={"autoResume": True},
)
