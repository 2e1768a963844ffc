"""A tool run from the test console records its trace: one `tool` span with its input and
output (through the tool's display transform), timing, isolation and mode; an async run's
span has the Celery worker and attempts. The trace is its owner's only."""

from __future__ import annotations

from datetime import datetime

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

# The run-loop tests' code definitions (rt_login masks its password for display).
from tests.agents_core.runtime.conftest import synced  # noqa: F401
from tests.tools_app.engine.test_async_runs import status_of, wait_until
from tools_app import observers
from tools_app.models import Tool, ToolRun
from traces.console import console_recorder
from traces.export import otel_attributes
from traces.models import Span


def convert(client, mode: str, value: float = 100):
    """A console run of the demo tool unit_convert (Celsius to Fahrenheit)."""
    return client.post(
        f"/api/tools/unit_convert/execute?mode={mode}",
        {"input": {"value": value, "from": "c", "to": "f"}},
        format="json",
    )


def trace(client, run_id):
    response = client.get(f"/api/tool-runs/{run_id}/trace")
    assert response.status_code == 200, response.content
    return response.json()["spans"]


@pytest.mark.django_db(transaction=True)
def test_a_sync_console_run_records_its_tool_span_masked_by_the_display_transform(
    synced,  # noqa: F811
    api,
):
    answer = api.post(
        "/api/tools/rt_login/execute?mode=sync",
        {"input": {"user": "ann", "password": "hunter2-secret"}},
        format="json",
    )
    assert answer.status_code == 200, answer.content
    run = ToolRun.objects.get(pk=answer.json()["id"])
    [span] = trace(api, run.pk)
    assert (span["kind"], span["name"], span["status"], span["parent"]) == (
        "tool",
        "rt_login",
        "ok",
        None,
    )
    assert span["traceId"] == span["toolRunId"] == str(run.pk)
    assert span["runId"] is None
    facts = span["attributes"]
    assert facts["input"] == {"user": "ann", "password": "***"}
    assert facts["output"] == {"user": "ann", "password": "***", "ok": True}
    assert "hunter2-secret" not in str(span)
    assert facts["model_output"] is None  # a tool with a transform shows no model view
    assert (facts["mode"], facts["outcome"], facts["attempts"], facts["worker"]) == (
        "sync",
        "completed",
        1,
        None,
    )
    assert facts["tool_kind"] == run.tool.kind
    assert facts["tool_duration_ms"] == run.duration_ms
    # The span ends when the row was written and lasts as long as the tool ran.
    start, end = datetime.fromisoformat(span["start"]), datetime.fromisoformat(span["end"])
    assert end == run.finished_at
    assert span["durationMs"] == pytest.approx(run.duration_ms, abs=0.01)
    assert start <= end


@pytest.mark.django_db(transaction=True)
def test_a_failed_console_run_records_an_error_span_with_the_isolation(api, owner):
    tool = Tool.objects.create(
        name="broken_tool",
        kind="python",
        owner=owner,
        input_schema={"type": "object"},
        config={"code": "raise RuntimeError('the tool broke')"},
    )
    answer = api.post(f"/api/tools/{tool.name}/execute?mode=sync", {"input": {}}, format="json")
    assert answer.json()["status"] == "failed"
    [span] = trace(api, answer.json()["id"])
    assert span["status"] == "error"
    assert "the tool broke" in span["error"]
    assert span["attributes"]["outcome"] == "failed"
    assert span["attributes"]["isolation"] == answer.json()["isolation"]
    assert span["attributes"]["isolation"]
    # Over OTLP the span names its tool run (it has no agent run).
    name, attributes = otel_attributes(Span.objects.get(span_id=span["id"]))
    assert attributes["studio.tool_run.id"] == answer.json()["id"]
    assert "studio.run.id" not in attributes
    assert attributes["error.type"] == "tool_error"


@pytest.mark.django_db(transaction=True)
def test_an_input_refused_run_records_its_errors(synced, api):  # noqa: F811
    answer = api.post(
        "/api/tools/unit_convert/execute?mode=sync", {"input": {"value": "x"}}, format="json"
    )
    assert answer.status_code == 400
    [span] = trace(api, answer.json()["id"])
    assert span["status"] == "error"
    assert span["attributes"]["errors"] == answer.json()["errors"]


@pytest.mark.celery_worker
@pytest.mark.django_db(transaction=True)
def test_an_async_console_run_records_its_span_in_the_worker(
    synced,  # noqa: F811
    celery_worker,
    api,
):
    answer = convert(api, "async")
    assert answer.status_code == 202
    run_id = answer.json()["id"]
    wait_until(lambda: status_of(run_id) == "completed")
    wait_until(lambda: Span.objects.filter(tool_run_id=run_id).exists())
    run = ToolRun.objects.get(pk=run_id)
    [span] = trace(api, run_id)
    facts = span["attributes"]
    assert (facts["mode"], facts["outcome"], facts["attempts"]) == ("async", "completed", 1)
    assert facts["worker"] == run.worker and facts["worker"]
    assert facts["input"] == {"value": 100, "from": "c", "to": "f"}
    assert facts["output"] == {"value": 212.0, "unit": "f"}
    # The span runs from the worker's claim to the recorded end.
    assert datetime.fromisoformat(span["start"]) == run.started_at
    assert datetime.fromisoformat(span["end"]) == run.finished_at


@pytest.mark.django_db(transaction=True)
def test_a_console_runs_trace_is_its_owners_only(
    synced,  # noqa: F811
    api,
    outsider_api,
    anon_client,
    client,
    owner,
    outsider,
):
    run_id = convert(api, "sync").json()["id"]
    assert len(trace(api, run_id)) == 1
    assert outsider_api.get(f"/api/tool-runs/{run_id}/trace").status_code == 404
    assert anon_client.get(f"/api/tool-runs/{run_id}/trace").status_code == 401
    page = f"/traces/tool-runs/{run_id}/"
    assert client.get(page).status_code == 302  # to the sign-in page
    client.force_login(outsider)
    assert client.get(page).status_code == 404
    client.force_login(owner)
    assert client.get(page).status_code == 200


@pytest.mark.django_db(transaction=True)
def test_tracing_a_console_run_costs_one_insert_and_nothing_without_a_listener(
    synced,  # noqa: F811
    api,
):
    convert(api, "sync")  # the first request warms what it caches
    with CaptureQueriesContext(connection) as traced:
        assert convert(api, "sync").status_code == 200
    observers.unregister(console_recorder)
    try:
        with CaptureQueriesContext(connection) as untraced:
            assert convert(api, "sync").status_code == 200
    finally:
        observers.register(console_recorder)
    # One INSERT, in the transaction that writes the run's row, with no savepoint (an
    # observer that fails never loses the row: tools_app/observers.py).
    traced_sql = [q["sql"] for q in traced.captured_queries]
    spans = [i for i, sql in enumerate(traced_sql) if sql.startswith('INSERT INTO "traces_span"')]
    assert len(spans) == 1
    assert traced_sql[spans[0] - 1].startswith('INSERT INTO "tools_app_toolrun"')
    assert not any("SAVEPOINT" in sql for sql in traced_sql)
    assert len(traced_sql) == len(untraced.captured_queries) + 1
    assert Span.objects.count() == 2  # the untraced run left none
