"""A chat's Python tool call that waits for a sandbox slot says so in the stream
(`tool-call-waiting` with why, then with no note once it runs), and then completes:
the user's share of the sandbox service's pool is held by runs another caller sent."""

from __future__ import annotations

import pytest
from channels.db import database_sync_to_async
from django.test import override_settings

from tests.agents_core.runtime.conftest import run_to_end
from tests.tools_app.engine.sandbox_service import sandbox_service, share_held, stopped
from tests.tools_app.engine.test_python_fair_shares import SHARE_NOTE

pytestmark = pytest.mark.django_db(transaction=True)


def studio_agent_with_python_tool(owner):  # noqa: ANN001, ANN201
    from agents_core.models import Agent, AgentTool
    from agents_core.services.threads import thread_create
    from tools_app.models import Tool

    agent = Agent.objects.create(
        slug="rt-sandboxed", name="Sandboxed", model="studio/scripted", owner=owner
    )
    tool = Tool.objects.create(
        name="py_double",
        kind="python",
        owner=owner,
        description="Doubles n.",
        input_schema={"type": "object", "properties": {"n": {"type": "integer"}}},
        config={"code": "return {'double': input['n'] * 2}"},
        timeout_seconds=10,
    )
    AgentTool.objects.create(agent=agent, tool=tool, key="py_double")
    return thread_create(user=owner, agent=agent)


async def test_a_chat_tool_call_shows_that_it_waits_for_a_sandbox_slot(owner):
    thread = await database_sync_to_async(studio_agent_with_python_tool)(owner)
    with sandbox_service("--owner-slots", "2", "--spares", "0") as service:
        # Another caller holds the user's share of the service's pool.
        hogs = await share_held(service, f"user:{owner.pk}", 15)
        with override_settings(STUDIO_SANDBOX_URL=service.url, STUDIO_SANDBOX_TOKEN=service.token):
            run, events = await run_to_end(thread, 'use py_double with {"n": 21}', owner)
        await stopped(hogs)

    waits = [e for e in events if e["type"] == "tool-call-waiting"]
    result = next(e for e in events if e["type"] == "tool-result")
    assert [w["note"] for w in waits] == [SHARE_NOTE, None]
    assert {w["toolCallId"] for w in waits} == {result["toolCallId"]}
    assert waits[0]["toolName"] == "py_double"
    assert result["output"] == {"double": 42}
    assert run.status == "completed"
