"""The one pipeline every run goes through: parse, validate, execute, validate output,
to_model_output, record. Failures become recorded failed runs, never exceptions."""

from __future__ import annotations

import asyncio
import time

import pytest
from asgiref.sync import async_to_sync

from agents_core.definitions import create_tool
from tools_app.execution import ExecutionContext, run_tool
from tools_app.models import ToolRun
from tools_app.services.execute import tool_execute

ITEMS_SCHEMA = {
    "type": "object",
    "properties": {
        "items": {
            "type": "array",
            "items": {
                "type": "object",
                "properties": {"name": {"type": "string"}, "qty": {"type": "integer"}},
                "required": ["name"],
            },
        },
        "city": {"type": "string"},
    },
    "required": ["items", "city"],
    "additionalProperties": False,
}


def _echo(data, context=None):
    return {"echo": data}


def _crash(data, context=None):
    return 1 / 0


def _bad_output(data, context=None):
    return {"count": "three"}


def _not_json(data, context=None):
    return {"when": object()}


def _slow_sync(data, context=None):
    time.sleep(3)
    return {}


async def _slow_async(data, context=None):
    await asyncio.sleep(30)
    return {}


@pytest.fixture
def echo(code_tool):
    return code_tool(
        create_tool(id="engine_echo", description="echo", execute=_echo, input_schema=ITEMS_SCHEMA)
    )


def test_a_code_tool_runs_and_its_run_is_recorded(echo, owner):
    run = tool_execute(tool=echo, input={"items": [], "city": "Oslo"}, user=owner)

    run.refresh_from_db()
    assert run.status == "completed"
    assert run.output == {"echo": {"items": [], "city": "Oslo"}}
    assert run.model_output == run.output
    assert run.created_by == owner
    assert run.duration_ms is not None and run.finished_at is not None


def test_a_json_syntax_error_reports_line_and_column(echo, owner):
    text = '{\n  "items": [],\n  "city": "Oslo",\n}'

    run = tool_execute(tool=echo, input_text=text, user=owner)

    assert run.status == "failed"
    assert "line 4, column 1" in run.error
    assert run.errors[0]["line"] == 4 and run.errors[0]["column"] == 1
    assert run.input == text  # the raw text is kept so the console can re-open it


def test_every_schema_error_comes_with_its_json_path(echo, owner):
    bad = {"items": [{"name": "a"}, {"name": "b", "qty": 1}, {"qty": "2"}], "extra": 1}

    run = tool_execute(tool=echo, input=bad, user=owner)

    paths = {(e["path"], e["message"]) for e in run.errors}
    assert run.status == "failed"
    assert ("$.items[2]", "'name' is a required property") in paths
    assert ("$.items[2].qty", "'2' is not of type 'integer'") in paths
    assert ("$", "'city' is a required property") in paths
    assert any("extra" in message for path, message in paths if path == "$")
    assert ToolRun.objects.filter(id=run.id, status="failed").exists()


def test_a_crash_is_a_failed_run_with_the_exception(code_tool, owner):
    tool = code_tool(create_tool(id="engine_crash", description="x", execute=_crash))

    run = tool_execute(tool=tool, input={}, user=owner)

    assert run.status == "failed"
    assert run.error == "ZeroDivisionError: division by zero"


def test_an_async_tool_past_its_timeout_fails_with_a_clear_message(code_tool, owner):
    tool = code_tool(
        create_tool(id="engine_slow_async", description="x", execute=_slow_async, timeout=0.3)
    )

    run = tool_execute(tool=tool, input={}, user=owner)

    assert run.status == "failed"
    assert run.error == "The tool timed out after 0.3 s."


def test_a_sync_tool_past_its_timeout_fails_without_blocking_the_caller(code_tool, owner):
    tool = code_tool(
        create_tool(id="engine_slow_sync", description="x", execute=_slow_sync, timeout=0.2)
    )

    run = tool_execute(tool=tool, input={}, user=owner)

    assert run.status == "failed"
    assert "timed out after 0.2 s" in run.error


def test_an_output_that_breaks_the_output_schema_fails_but_is_shown(code_tool, owner):
    tool = code_tool(
        create_tool(
            id="engine_bad_output",
            description="x",
            execute=_bad_output,
            output_schema={
                "type": "object",
                "properties": {"count": {"type": "integer"}},
                "required": ["count"],
            },
        )
    )

    run = tool_execute(tool=tool, input={}, user=owner)

    assert run.status == "failed"
    assert run.output == {"count": "three"}
    assert run.errors == [{"path": "$.count", "message": "'three' is not of type 'integer'"}]
    assert run.error.startswith("Output does not match the tool's output schema")


def test_an_output_that_is_not_json_is_a_failed_run(code_tool, owner):
    tool = code_tool(create_tool(id="engine_not_json", description="x", execute=_not_json))

    run = tool_execute(tool=tool, input={}, user=owner)

    assert run.status == "failed"
    assert "not JSON" in run.error


def test_to_model_output_of_a_code_tool_shapes_what_the_model_sees(code_tool, owner):
    tool = code_tool(
        create_tool(
            id="engine_model_output",
            description="x",
            execute=_echo,
            to_model_output=lambda output: f"echoed {len(output['echo'])} keys",
        )
    )

    run = tool_execute(tool=tool, input={"a": 1, "b": 2}, user=owner)

    assert run.output == {"echo": {"a": 1, "b": 2}}
    assert run.model_output == "echoed 2 keys"


def test_a_failing_to_model_output_fails_the_run_and_keeps_the_output(code_tool, owner):
    tool = code_tool(
        create_tool(
            id="engine_model_output_crash",
            description="x",
            execute=_echo,
            to_model_output=lambda output: output["nope"],
        )
    )

    run = tool_execute(tool=tool, input={}, user=owner)

    assert run.status == "failed"
    assert run.error.startswith("to_model_output failed: KeyError")
    assert run.output == {"echo": {}}


def test_studio_model_output_config_picks_fields(make_tool, owner):
    tool = make_tool(
        kind="python",
        owner=owner,
        config={"code": "return {'a': 1, 'b': 2}"},
        model_output={"pick": ["b"]},
    )

    run = tool_execute(tool=tool, input={}, user=owner)

    assert run.output == {"a": 1, "b": 2}
    assert run.model_output == {"b": 2}


def test_run_tool_writes_nothing_unless_asked(echo):
    before = ToolRun.objects.count()

    outcome = async_to_sync(run_tool)(echo, {"items": [], "city": "x"}, ExecutionContext())

    assert outcome.status == "completed"
    assert outcome.tool_run is None
    assert ToolRun.objects.count() == before


def test_run_tool_records_a_run_when_asked(echo, owner):
    context = ExecutionContext(user=owner, record=True)

    outcome = async_to_sync(run_tool)(echo, {"items": [], "city": "x"}, context)

    assert outcome.tool_run is not None
    assert ToolRun.objects.get(id=outcome.tool_run.id).output == outcome.output


def test_setting_the_abort_event_stops_a_running_tool(code_tool):
    tool = code_tool(
        create_tool(id="engine_abortable", description="x", execute=_slow_async, timeout=60)
    )

    async def scenario():
        abort = asyncio.Event()
        asyncio.get_running_loop().call_later(0.2, abort.set)
        return await run_tool(tool, {}, ExecutionContext(abort=abort))

    outcome = async_to_sync(scenario)()

    assert outcome.status == "failed"
    assert outcome.error == "The run was aborted."


def test_run_tool_reports_invalid_input_as_a_failed_outcome(echo):
    outcome = async_to_sync(run_tool)(echo, {"items": "no"}, ExecutionContext())

    assert outcome.status == "failed"
    assert {e["path"] for e in outcome.errors} == {"$", "$.items"}
