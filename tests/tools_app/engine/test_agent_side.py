"""The seam between tools and the agent side: code tools, agent tools and task tools get
what they need through the execution context (tools_app.agent_side), and run_tool is the
one step that validates, gates, executes and maps."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import pytest
from asgiref.sync import async_to_sync

from tools_app.agent_side import AgentSide, agent_side_get, agent_side_install
from tools_app.definitions import create_tool
from tools_app.execution import DEFERRED, SKIPPED, ExecutionContext, Gate, run_tool
from tools_app.types.system.tasks import task_update, task_write


def _upper(data: dict, context: Any = None) -> dict:
    return {"text": data["text"].upper(), "length": len(data["text"])}


TEXT_INPUT = {
    "type": "object",
    "properties": {"text": {"type": "string"}},
    "required": ["text"],
    "additionalProperties": False,
}


@pytest.fixture
def upper(code_tool):
    return code_tool(
        create_tool(id="seam_upper", description="x", execute=_upper, input_schema=TEXT_INPUT)
    )


@pytest.fixture
def no_agent_side():
    installed = agent_side_get()
    agent_side_install(None)
    yield
    agent_side_install(installed)


def _side(**changes: Any) -> AgentSide:
    installed = agent_side_get()
    return AgentSide(
        tool_definition=changes.get("tool_definition", installed.tool_definition),
        run_agent=changes.get("run_agent", installed.run_agent),
        agent_get=changes.get("agent_get", installed.agent_get),
        task_list=changes.get("task_list", installed.task_list),
    )


def run(tool: Any, value: Any, context: ExecutionContext | None = None) -> Any:
    return async_to_sync(run_tool)(tool, value, context or ExecutionContext())


def test_a_code_tool_finds_its_definition_through_the_context(upper):
    shout = create_tool(id="seam_upper", description="x", execute=lambda d, c: {"text": "!"})
    context = ExecutionContext(agent_side=_side(tool_definition={"seam_upper": shout}.get))

    outcome = run(upper, {"text": "abc"}, context)

    assert outcome.status == "completed", outcome.error
    assert outcome.output == {"text": "!"}


def test_without_an_agent_side_code_and_agent_tools_fail_with_a_reason(
    upper, make_tool, owner, no_agent_side
):
    agent_tool = make_tool(kind="agent", owner=owner, config={"agent": "anyone"})

    code = run(upper, {"text": "abc"})
    agent = run(agent_tool, {"prompt": "hi"}, ExecutionContext(user=owner))

    assert code.status == "failed" and "not loaded in this process" in code.error
    assert agent.status == "failed" and "needs the agent runtime" in agent.error


def test_an_agent_tool_runs_through_the_sides_run_agent(make_tool, owner):
    asked = []

    async def run_agent(slug: str, prompt: str, context: Any) -> str:
        asked.append((slug, prompt, context.user))
        context.links["subagent"] = {"agent": slug}
        return f"{slug} says hi"

    tool = make_tool(kind="agent", owner=owner, config={"agent": "helper"})
    context = ExecutionContext(user=owner, agent_side=_side(run_agent=run_agent))

    outcome = run(tool, {"prompt": "hello"}, context)

    assert outcome.output == "helper says hi"
    assert asked == [("helper", "hello", owner)]
    assert outcome.links == {"subagent": {"agent": "helper"}}


def test_a_gate_that_skips_runs_nothing_and_its_output_is_the_result(upper):
    calls = []

    async def before(value: Any) -> Gate:
        calls.append(value)
        return Gate("skip", output={"text": "cached"})

    outcome = run(upper, {"text": "abc"}, ExecutionContext(before=before))

    assert (outcome.status, outcome.output, outcome.model_output) == (
        SKIPPED,
        {"text": "cached"},
        {"text": "cached"},
    )
    assert calls == [{"text": "abc"}]


def test_an_input_is_validated_before_the_gate_and_a_changed_input_again(upper):
    async def never(value: Any) -> Gate:
        raise AssertionError("the gate must not see an invalid input")

    async def change(value: Any) -> Gate:
        return Gate(input={"text": 3})

    invalid = run(upper, {"text": 1}, ExecutionContext(before=never))
    changed = run(upper, {"text": "abc"}, ExecutionContext(before=change))

    assert invalid.input_rejected and invalid.errors[0]["path"] == "$.text"
    assert changed.input_rejected and changed.errors[0]["path"] == "$.text"


def test_a_deferred_call_is_not_executed(upper):
    async def defer(value: Any) -> Gate:
        return Gate("defer")

    outcome = run(upper, {"text": "abc"}, ExecutionContext(before=defer))

    assert outcome.status == DEFERRED and outcome.output is None


def test_an_output_the_after_step_replaces_is_mapped_for_the_model_once(upper):
    upper.model_output = {"pick": ["text"]}
    seen = []

    async def after(output: Any, error: str) -> tuple[Any, str]:
        seen.append((output, error))
        return {"text": "replaced", "length": 8}, ""

    outcome = run(upper, {"text": "abc"}, ExecutionContext(after=after))

    assert seen == [({"text": "ABC", "length": 3}, "")]
    assert outcome.output == {"text": "replaced", "length": 8}
    assert outcome.model_output == {"text": "replaced"}


def _crash(data: dict, context: Any = None) -> dict:
    raise RuntimeError("down")


def test_an_after_step_can_turn_a_failure_into_a_result_and_a_result_into_a_failure(
    upper, code_tool
):
    crash = code_tool(create_tool(id="seam_crash", description="x", execute=_crash))
    seen = []

    async def rescue(output: Any, error: str) -> tuple[Any, str]:
        seen.append(error)
        return {"text": "fallback"}, ""

    async def refuse(output: Any, error: str) -> tuple[Any, str]:
        return output, "refused by the hook"

    async def unused(output: Any, error: str) -> tuple[Any, str]:
        raise AssertionError("an input the schema rejects never reaches the after step")

    rescued = run(crash, {}, ExecutionContext(after=rescue))
    refused = run(upper, {"text": "abc"}, ExecutionContext(after=refuse))
    rejected = run(upper, {"text": None}, ExecutionContext(after=unused))

    assert seen == ["RuntimeError: down"]
    assert (rescued.status, rescued.error, rescued.model_output) == (
        "completed",
        "",
        {"text": "fallback"},
    )
    assert (refused.status, refused.error) == ("failed", "refused by the hook")
    assert refused.output == {"text": "ABC", "length": 3}
    assert rejected.input_rejected


class MemoryTaskList:
    """A task list without a database: the rule the task tools keep is theirs."""

    def __init__(self, refuse_saves: bool = False) -> None:
        self.rows: list[dict[str, Any]] = []
        self.refuse_saves = refuse_saves

    def items(self) -> list[dict[str, Any]]:
        return [dict(row) for row in self.rows]

    def replace(self, items: list[dict[str, Any]]) -> None:
        self.rows = [{"id": index + 1, **item} for index, item in enumerate(items)]

    def save(self, task_id: int, changes: dict[str, Any]) -> bool:
        if self.refuse_saves:
            return False
        next(row for row in self.rows if row["id"] == task_id).update(changes)
        return True


def _task_context(tasks: MemoryTaskList) -> ExecutionContext:
    thread = SimpleNamespace(pk=7)
    return ExecutionContext(thread=thread, agent_side=_side(task_list=lambda pk: tasks))


def test_task_tools_keep_one_task_in_progress_on_any_task_list(system_tool):
    tasks = MemoryTaskList()
    context = _task_context(tasks)
    write, update = system_tool(task_write.id), system_tool(task_update.id)
    two = {"tasks": [{"title": "a", "status": "in_progress"}, {"title": "b"}]}

    written = run(write, two, context)
    refused = run(update, {"id": 2, "status": "in_progress"}, context)

    assert written.status == "completed", written.error
    assert written.output["summary"] == {
        "total": 2,
        "pending": 1,
        "in_progress": 1,
        "completed": 0,
    }
    assert refused.status == "failed"
    assert refused.error.startswith("Task 1 ('a') is already in progress")


def test_a_save_the_store_refuses_is_the_one_in_progress_error(system_tool):
    tasks = MemoryTaskList(refuse_saves=True)
    tasks.replace([{"title": "a", "status": "pending", "notes": "", "position": 0}])

    outcome = run(
        system_tool(task_update.id), {"id": 1, "status": "in_progress"}, _task_context(tasks)
    )

    assert (outcome.status, outcome.error) == (
        "failed",
        "At most one task can be in progress at a time.",
    )
