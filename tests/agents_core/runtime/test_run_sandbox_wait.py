"""A chat's Python tool call that waits for a sandbox slot says so in the stream
(`tool-call-waiting` with why, then with no note once it runs), and then completes:
the user's share of the sandbox service's pool is held by runs another caller sent."""

from __future__ import annotations

import asyncio

import pytest
from channels.db import database_sync_to_async
from django.test import override_settings

from tests.agents_core.runtime.conftest import run_to_end
from tests.tools_app.engine.sandbox_service import sandbox_service
from tests.tools_app.engine.test_python_fair_shares import SHARE_NOTE
from tools_app.types.python import run_limits
from tools_app.types.python.remote import remote_run

pytestmark = pytest.mark.django_db(transaction=True)

HOG = "import time\ntime.sleep(60)"


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
        holding = {"url": service.url, "token": service.token, "tenant": f"user:{owner.pk}"}

        def hog(timeout: float, on_wait=None):  # noqa: ANN001, ANN202
            return asyncio.ensure_future(
                remote_run(
                    **holding,
                    code=HOG,
                    input=None,
                    timeout=timeout,
                    limits=run_limits(),
                    on_wait=on_wait,
                )
            )

        # Another caller holds the user's share: of three runs it sends, one waits.
        told = asyncio.Event()

        async def heard(note: str | None) -> None:
            told.set()

        hogs = [hog(15, heard) for _ in range(3)]
        await asyncio.wait_for(told.wait(), 60)
        with override_settings(STUDIO_SANDBOX_URL=service.url, STUDIO_SANDBOX_TOKEN=service.token):
            run, events = await run_to_end(thread, 'use py_double with {"n": 21}', owner)
        for running in hogs:  # the service's end stops their runs
            running.cancel()
        await asyncio.gather(*hogs, return_exceptions=True)

    waits = [e for e in events if e["type"] == "tool-call-waiting"]
    result = next(e for e in events if e["type"] == "tool-result")
    assert [w["note"] for w in waits] == [SHARE_NOTE, None]
    assert {w["toolCallId"] for w in waits} == {result["toolCallId"]}
    assert waits[0]["toolName"] == "py_double"
    assert result["output"] == {"double": 42}
    assert run.status == "completed"
