"""A NUL character (U+0000) in what a tool produces: PostgreSQL cannot store it, so it is
stored as U+FFFD, the run is recorded once and says so in its logs. Sync execute, async
execute in a real Celery worker, and a chat whose tool answers with NUL."""

from __future__ import annotations

import json

import pytest
from channels.db import database_sync_to_async

from agents_core.models import Message, StreamEvent, ToolCall
from common.json_input import value_problem
from tests.conftest import celery_worker_process
from tests.tools_app.engine.test_async_runs import wait_until
from tools_app.execution import NUL_NOTE
from tools_app.models import Tool, ToolRun

CODE = 'print("log\\x00line")\nreturn {"text": "a\\x00b", "key\\x00": ["c\\x00"]}'
CLEAN = {"text": "a\ufffdb", "key\ufffd": ["c\ufffd"]}


def python_tool(owner, code: str, **fields) -> Tool:
    return Tool.objects.create(
        name=fields.pop("name", "nul_python"),
        kind="python",
        owner=owner,
        config={"code": code},
        input_schema={"type": "object"},
        timeout_seconds=20,
        **fields,
    )


@pytest.mark.django_db
def test_a_sync_execute_whose_output_has_nul_is_a_recorded_run(api, owner):
    python_tool(owner, CODE)

    response = api.post("/api/tools/nul_python/execute", {"input": {}}, format="json")

    assert response.status_code == 200, response.content[:500]
    body = response.json()
    assert body["status"] == "completed"
    assert body["output"] == CLEAN
    assert "log\ufffdline" in body["logs"] and NUL_NOTE in body["logs"]
    run = ToolRun.objects.get(id=body["id"])
    assert (run.output, run.model_output) == (CLEAN, CLEAN)
    assert "log\ufffdline" in run.logs


@pytest.mark.django_db
def test_a_sync_execute_whose_error_has_nul_is_a_recorded_failed_run(api, owner):
    python_tool(owner, 'raise ValueError("bad\\x00thing")')

    response = api.post("/api/tools/nul_python/execute", {"input": {}}, format="json")

    assert response.status_code == 200, response.content[:500]
    body = response.json()
    assert body["status"] == "failed"
    assert body["error"] == "ValueError: bad\ufffdthing"
    assert ToolRun.objects.get(id=body["id"]).error == "ValueError: bad\ufffdthing"


@pytest.mark.celery_worker
@pytest.mark.django_db(transaction=True)
def test_an_async_execute_whose_output_has_nul_completes_once_in_a_worker(api, owner):
    python_tool(owner, CODE, execution_mode="async")

    with celery_worker_process():
        response = api.post("/api/tools/nul_python/execute", {"input": {}}, format="json")
        assert response.status_code == 202, response.content[:500]
        run_id = response.json()["id"]
        run = wait_until(
            lambda: ToolRun.objects.filter(id=run_id, status__in=["completed", "failed"]).first()
        )

    assert (run.status, run.attempts) == ("completed", 1), run.error
    assert run.output == CLEAN
    assert NUL_NOTE in run.logs


@pytest.fixture
def nul_agent(transactional_db, settings):
    from agents_core.registry import definitions_sync, discover, reset_registry
    from tests.studio import nul_definitions

    settings.STUDIO_OFFLINE_DELAY = 0.0
    registry = discover()
    registry.collect_module(nul_definitions)
    reset_registry(registry)
    definitions_sync(registry=registry)
    yield
    reset_registry()


@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize(
    "tool,event,field,expected",
    [
        (
            "nul_answer",
            "tool-result",
            "output",
            {"text": "before\ufffdafter", "key\ufffd": ["a\ufffdb", "x\ufffd"]},
        ),
        ("nul_crash", "tool-error", "error", "RuntimeError: the disk\ufffdis full"),
    ],
)
async def test_a_chat_whose_model_and_tool_produce_nul_completes(
    nul_agent, owner, tool, event, field, expected
):
    from tests.agents_core.runtime.conftest import run_to_end

    thread = await database_sync_to_async(_thread)(owner)

    # The model's arguments hold a NUL too (written as \u0000 in its JSON).
    run, events = await run_to_end(thread, f'use {tool} with {{"text": "a\\u0000b"}}', owner)

    assert run.status == "completed", run.error
    result = next(e for e in events if e["type"] == event)
    assert result[field] == expected
    call = await database_sync_to_async(ToolCall.objects.get)(run=run, tool_name=tool)
    assert getattr(call, field) == expected
    assert call.input == {"text": "a\ufffdb"}
    stored = await database_sync_to_async(_stored)(run)
    assert value_problem(stored, max_string_chars=None) is None  # no NUL anywhere
    assert "\ufffd" in json.dumps(stored, ensure_ascii=False)


def _thread(owner):
    from agents_core.models import Agent
    from agents_core.services.threads import thread_create

    return thread_create(user=owner, agent=Agent.objects.get(slug="nul-agent"))


def _stored(run) -> list:
    """What the run stored: its messages' parts and its events."""
    messages = list(Message.objects.filter(run=run).values_list("parts", flat=True))
    events = list(StreamEvent.objects.filter(run=run).values_list("payload", flat=True))
    return [messages, events]
