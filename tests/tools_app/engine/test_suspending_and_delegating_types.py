"""ask_user, submit_plan and client functions suspend inside a run and refuse clearly
outside one; agent-as-tool runs another agent through the runtime."""

from __future__ import annotations

import pytest
from asgiref.sync import async_to_sync

from agents_core.models import Agent, Run, Source, Thread
from tools_app.execution import ExecutionContext, run_tool
from tools_app.services.execute import tool_execute


@pytest.fixture
def chat_run(owner):
    agent = Agent.objects.create(
        slug="engine-host", name="Host", model="studio/scripted", owner=owner, source=Source.STUDIO
    )
    thread = Thread.objects.create(agent=agent, owner=owner, resource_id=str(owner.pk))
    return Run.objects.create(thread=thread, agent=agent, started_by=owner)


def run(tool, value, **context):
    return async_to_sync(run_tool)(tool, value, ExecutionContext(**context))


def test_ask_user_suspends_with_its_question(system_tool, chat_run):
    outcome = run(
        system_tool("ask_user"),
        {"question": "Which city?", "mode": "single", "options": ["Oslo", "Rome"]},
        run=chat_run,
    )

    assert outcome.status == "suspended"
    assert outcome.suspend_payload == {
        "kind": "ask-user",
        "question": "Which city?",
        "mode": "single",
        "options": ["Oslo", "Rome"],
    }


def test_ask_user_validates_its_input_before_suspending(system_tool):
    outcome = run(system_tool("ask_user"), {"question": "Pick", "mode": "multi"})

    assert outcome.status == "failed"
    assert outcome.errors == [{"path": "$", "message": "'options' is a required property"}]


def test_an_answer_resumes_ask_user_and_becomes_its_output(system_tool, chat_run):
    value = {"question": "Which?", "mode": "multi", "options": ["a", "b", "c"]}

    outcome = run(
        system_tool("ask_user"), value, run=chat_run, resume_payload={"answer": ["a", "c"]}
    )

    assert outcome.status == "completed"
    assert outcome.output == {"answer": ["a", "c"]}


@pytest.mark.parametrize(
    ("mode", "answer", "message"),
    [
        ("single", "z", "must be one of the options"),
        ("multi", ["a", "z"], "list of options"),
        ("free-text", ["a"], "must be text"),
    ],
)
def test_an_answer_outside_the_options_is_refused(system_tool, mode, answer, message):
    value = {"question": "Which?", "mode": mode}
    if mode != "free-text":
        value["options"] = ["a", "b"]

    outcome = run(system_tool("ask_user"), value, resume_payload={"answer": answer})

    assert outcome.status == "failed"
    assert message in outcome.error


def test_submit_plan_suspends_and_resumes_with_the_decision(system_tool, chat_run):
    tool = system_tool("submit_plan")
    plan = {"plan": "Migrate the data", "steps": ["copy", "verify"]}

    first = run(tool, plan, run=chat_run)
    second = run(
        tool, plan, run=chat_run, resume_payload={"approved": False, "reason": "too risky"}
    )
    bad = run(tool, plan, run=chat_run, resume_payload={"approved": "yes"})

    assert first.suspend_payload == {
        "kind": "plan-approval",
        "plan": "Migrate the data",
        "steps": ["copy", "verify"],
    }
    assert second.output == {"approved": False, "reason": "too risky"}
    assert bad.status == "failed" and bad.errors[0]["path"] == "$.approved"


def test_a_suspending_tool_run_from_the_console_fails_and_shows_its_question(system_tool, owner):
    tool_run = tool_execute(tool=system_tool("ask_user"), input={"question": "Name?"}, user=owner)

    assert tool_run.status == "failed"
    assert "preview chat" in tool_run.error
    assert tool_run.output["question"] == "Name?"


def test_a_client_function_from_the_console_is_a_clear_error(make_tool, owner):
    tool = make_tool(kind="client", owner=owner, config={"function": "pickColor"})

    tool_run = tool_execute(tool=tool, input={}, user=owner)

    assert tool_run.status == "failed"
    assert tool_run.error.startswith("Client functions run in the preview chat")


def test_a_client_function_in_a_run_suspends_for_the_browser(make_tool, owner, chat_run):
    tool = make_tool(kind="client", owner=owner, config={"function": "pickColor"})

    outcome = run(tool, {"hint": "warm"}, run=chat_run)

    assert outcome.status == "suspended"
    assert outcome.suspend_payload == {
        "kind": "client-function",
        "tool": tool.name,
        "function": "pickColor",
        "input": {"hint": "warm"},
    }


@pytest.mark.django_db(transaction=True)
def test_agent_as_tool_returns_the_other_agents_answer(make_tool, owner):
    Agent.objects.create(
        slug="engine-helper",
        name="Helper",
        model="studio/scripted",
        owner=owner,
        source=Source.STUDIO,
        instructions="Be brief.",
    )
    tool = make_tool(
        kind="agent",
        owner=owner,
        config={"agent": "engine-helper"},
        input_schema={
            "type": "object",
            "properties": {"prompt": {"type": "string"}},
            "required": ["prompt"],
        },
        timeout_seconds=60,
    )

    tool_run = tool_execute(tool=tool, input={"prompt": "Hello there"}, user=owner)

    assert tool_run.status == "completed", tool_run.error
    assert isinstance(tool_run.output, str) and tool_run.output.strip()


def test_agent_as_tool_refuses_an_agent_the_user_cannot_run(make_tool, owner, outsider):
    Agent.objects.create(
        slug="engine-foreign",
        name="Foreign",
        model="studio/scripted",
        owner=outsider,
        source=Source.STUDIO,
    )
    tool = make_tool(kind="agent", owner=owner, config={"agent": "engine-foreign"})

    tool_run = tool_execute(tool=tool, input={"prompt": "hi"}, user=owner)

    assert tool_run.status == "failed"
    assert tool_run.error == "No agent 'engine-foreign' that this user can run."


def test_a_recorded_run_is_linked_to_the_chats_tool_call(system_tool, chat_run, owner):
    from agents_core.models import ToolCall

    tool = system_tool("web_search")
    call = ToolCall.objects.create(run=chat_run, call_id="call_1", tool_name="search", tool=tool)

    outcome = run(tool, {"query": "x"}, user=owner, run=chat_run, tool_call=call.pk, record=True)

    assert outcome.tool_run.tool_call_id == call.pk
    assert call.tool_runs.get().status == "failed"
