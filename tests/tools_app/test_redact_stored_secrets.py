"""The data migration tools_app 0008: what was stored before secrets were redacted where
they are used (a run's error quoting a provider key, events, spans, a tool run echoing a
basic auth header) is cleaned of every secret stored today, through the migration
executor; rows without a secret are left as they were."""

from __future__ import annotations

import uuid

import pytest
from django.db import connection
from django.db.migrations.executor import MigrationExecutor
from django.utils import timezone

pytestmark = pytest.mark.django_db(transaction=True)

KEY = "sk-proj-Stored0Key1Quoted2By3A4Provider"
PASSWORD = "pw-Stored0Basic1Password"
TOKEN = "tok-Stored0Oauth1Access2Token"
BEFORE = ("tools_app", "0007_names_per_owner")
AFTER = ("tools_app", "0008_redact_stored_secrets")


def _migrate(target: tuple[str, str]) -> None:
    executor = MigrationExecutor(connection)
    executor.loader.build_graph()
    executor.migrate([target])


def _stored_rows(owner):
    """Rows as an earlier studio left them, written with the models of 0007 (the schema is
    the same: 0008 changes only data)."""
    from agents_core.models import Agent, Message, Run, StreamEvent, Thread, ToolCall
    from providers.services import credential_create
    from tools_app.auth.store import Holder, token_put
    from tools_app.crypto import credentials_set
    from tools_app.models import Tool, ToolRun
    from tools_app.redaction import basic_pair
    from traces.models import Span

    credential_create(owner=owner, provider="openai", api_key=KEY)
    tool = Tool.objects.create(name="basic_api", kind="http", owner=owner, config={"url": "x"})
    credentials_set(tool, {"username": "ann", "password": PASSWORD})
    token_put(Holder(tool=tool, source=None, user_id=owner.pk), "digest", {"access_token": TOKEN})
    agent = Agent.objects.create(slug="old", name="Old", model="openai/gpt-4o-mini", owner=owner)
    thread = Thread.objects.create(agent=agent, resource_id=str(owner.pk), owner=owner)
    error = f"The model provider refused the credentials: Incorrect API key provided: {KEY}"
    run = Run.objects.create(thread=thread, agent=agent, status="failed", error=error)
    StreamEvent.objects.create(
        thread=thread,
        run=run,
        seq=1,
        type="run-error",
        payload={"type": "run-error", "error": error},
    )
    StreamEvent.objects.create(
        thread=thread,
        run=run,
        seq=2,
        type="text-delta",
        payload={"type": "text-delta", "delta": "hi"},
    )
    Message.objects.create(thread=thread, run=run, role="assistant", parts=[{"text": TOKEN}])
    ToolCall.objects.create(run=run, call_id="c1", tool_name="basic_api", error=f"bad {TOKEN}")
    Span.objects.create(
        span_id=uuid.uuid4().hex[:16],
        trace_id=run.pk,
        run=run,
        kind="model",
        name="openai/gpt-4o-mini",
        start=timezone.now(),
        status="error",
        error=error,
        attributes={"params": {"header": f"Bearer {KEY}"}},
    )
    pair = basic_pair("ann", PASSWORD)
    tool_run = ToolRun.objects.create(
        tool=tool, mode="sync", status="failed", error=f"HTTP 401: Basic {pair}", logs=PASSWORD
    )
    return run, tool_run


def test_the_migration_cleans_every_stored_secret_out_of_what_was_written(owner):
    from agents_core.models import Message, Run, StreamEvent, ToolCall
    from tools_app.models import ToolRun
    from traces.models import Span

    _migrate(BEFORE)
    run, tool_run = _stored_rows(owner)
    assert KEY in Run.objects.get(pk=run.pk).error

    _migrate(AFTER)

    run = Run.objects.get(pk=run.pk)
    assert KEY not in run.error and run.error.endswith("provided: [redacted]")
    events = list(StreamEvent.objects.filter(run=run).order_by("seq"))
    assert events[0].payload["error"] == run.error
    assert events[1].payload == {"type": "text-delta", "delta": "hi"}
    [span] = Span.objects.filter(run=run)
    assert span.error == run.error
    assert span.attributes == {"params": {"header": "Bearer [redacted]"}}
    assert ToolCall.objects.get(run=run).error == "bad [redacted]"
    assert Message.objects.get(run=run).parts == [{"text": "[redacted]"}]
    tool_run = ToolRun.objects.get(pk=tool_run.pk)
    assert (tool_run.error, tool_run.logs) == ("HTTP 401: Basic [redacted]", "[redacted]")
