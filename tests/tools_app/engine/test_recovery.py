"""Async tool runs recover from a dead worker without beat, are never executed by two
live processes at once, and show the tool the same idempotency key on every attempt.

Real Celery worker processes against Redis and PostgreSQL; no beat is started and no
test calls the sweep where recovery is the point. Waits are bounded (a test fails when a
bound passes), never timed assertions.
"""

from __future__ import annotations

import os
import signal
import threading
from datetime import timedelta

import pytest
from django.db import connections
from django.utils import timezone

from tests.conftest import celery_worker_process
from tests.tools_app.engine import recovery_tools
from tests.tools_app.engine.recovery_tools import journal_entries
from tests.tools_app.engine.test_async_runs import status_of, wait_until
from tools_app.models import ToolRun
from tools_app.services import runs
from tools_app.services.execute import tool_execute
from tools_app.services.runs import tool_run_process, tool_runs_recover
from tools_app.tasks import tool_run_execute

CODE_MODULES = "tests.tools_app.engine.recovery_tools"
BOUND = 60.0  # seconds: "well under a minute", as a bound on the test


@pytest.fixture
def journal_tool(code_tool):
    return code_tool(recovery_tools.rec_journal)


@pytest.mark.celery_worker
@pytest.mark.django_db(transaction=True)
def test_a_killed_workers_run_is_finished_by_another_worker_without_beat(
    journal_tool, owner, tmp_path
):
    journal = str(tmp_path / "journal")
    with (
        celery_worker_process(STUDIO_CODE_MODULES=CODE_MODULES) as first,
        celery_worker_process(STUDIO_CODE_MODULES=CODE_MODULES) as second,
    ):
        workers = {first.pid: first, second.pid: second}
        run = tool_execute(
            tool=journal_tool, input={"journal": journal, "sleep": 2}, user=owner, mode="async"
        )
        [started] = wait_until(lambda: journal_entries(journal), within=BOUND)
        victim = workers.pop(started["pid"])
        os.kill(victim.pid, signal.SIGKILL)
        victim.wait()
        # Default lease and recovery period (15 s and 5 s): the survivor takes it back.
        wait_until(lambda: status_of(run.id) in ("completed", "failed"), within=BOUND)
        [survivor] = workers

    run.refresh_from_db()
    assert run.status == "completed", run.error
    assert run.attempts == 2
    first_try, second_try = journal_entries(journal)
    assert (first_try["attempt"], second_try["attempt"]) == (1, 2)
    assert (first_try["pid"], second_try["pid"]) == (victim.pid, survivor)
    # The same key on both attempts, the run's id: the tool can recognise the repeat.
    assert first_try["key"] == second_try["key"] == str(run.id)
    assert run.output == {"key": str(run.id), "attempt": 2}
    assert [entry["attempt"] for entry in journal_entries(journal, "end")] == [2]


@pytest.mark.celery_worker
@pytest.mark.django_db(transaction=True)
def test_a_killed_prefork_childs_run_is_recovered_inside_the_same_worker(
    journal_tool, owner, tmp_path
):
    """The production pool: the worker's main process replaces the killed child and
    redelivers its message at once (reject_on_worker_lost); that delivery finds the run
    held and does nothing, and a child takes the run back once the lease expires."""
    journal = str(tmp_path / "journal")
    env = {
        "STUDIO_CODE_MODULES": CODE_MODULES,
        "STUDIO_TOOL_RUN_LEASE_SECONDS": "5",
        "STUDIO_TOOL_RUN_RECOVER_SECONDS": "1",
    }
    with celery_worker_process("--pool=prefork", "--concurrency=2", **env) as worker:
        run = tool_execute(
            tool=journal_tool, input={"journal": journal, "sleep": 2}, user=owner, mode="async"
        )
        [started] = wait_until(lambda: journal_entries(journal), within=BOUND)
        assert started["pid"] != worker.pid  # a child of the pool executes it
        os.kill(started["pid"], signal.SIGKILL)
        wait_until(lambda: status_of(run.id) in ("completed", "failed"), within=BOUND)
        assert worker.poll() is None

    run.refresh_from_db()
    assert run.status == "completed", run.error
    assert run.attempts == 2
    assert [entry["attempt"] for entry in journal_entries(journal)] == [1, 2]
    assert {entry["key"] for entry in journal_entries(journal)} == {str(run.id)}


@pytest.mark.celery_worker
@pytest.mark.django_db(transaction=True)
def test_a_run_is_never_executed_twice_while_its_worker_lives(journal_tool, owner, tmp_path):
    """The tool sleeps more than two leases long while a second worker sweeps every
    second and a duplicate of the task message is delivered: the live worker's renewals
    keep the run its own."""
    journal = str(tmp_path / "journal")
    short = {
        "STUDIO_CODE_MODULES": CODE_MODULES,
        "STUDIO_TOOL_RUN_LEASE_SECONDS": "5",
        "STUDIO_TOOL_RUN_RECOVER_SECONDS": "1",
    }
    with celery_worker_process(**short), celery_worker_process(**short):
        run = tool_execute(
            tool=journal_tool, input={"journal": journal, "sleep": 12}, user=owner, mode="async"
        )
        wait_until(lambda: journal_entries(journal), within=BOUND)
        tool_run_execute.delay(str(run.id))  # a second delivery of the same run
        wait_until(lambda: status_of(run.id) in ("completed", "failed"), within=BOUND)

    run.refresh_from_db()
    assert run.status == "completed", run.error
    assert run.attempts == 1
    assert len(journal_entries(journal)) == 1
    assert run.output == {"key": str(run.id), "attempt": 1}


@pytest.mark.django_db(transaction=True)
def test_a_process_that_lost_its_lease_stops_its_tool_and_records_nothing(
    code_tool, owner, settings
):
    """The run was taken back (its lease had expired: a stalled process) and queued
    again: the old holder sees it at its next renewal, aborts its tool at once and does
    not overwrite the run."""
    from agents_core.definitions import create_tool

    settings.STUDIO_TOOL_RUN_LEASE_SECONDS = 3
    started, release = threading.Event(), threading.Event()

    def wait_for_release(data, context):
        started.set()
        release.wait(60)
        return {"late": True}

    tool = code_tool(
        create_tool(
            id="rec_stalls",
            description="Waits until the test releases it.",
            execution_mode="async",
            timeout=60,
            execute=wait_for_release,
        )
    )
    run = ToolRun.objects.create(
        tool=tool, status="pending", mode="async", input={}, created_by=owner
    )
    returned = []

    def worker():
        try:
            returned.append(tool_run_process(run_id=run.id))
        finally:
            connections.close_all()

    thread = threading.Thread(target=worker)
    thread.start()
    try:
        assert started.wait(BOUND)
        # What recovery does to a run whose lease expired: back to pending, no holder.
        ToolRun.objects.filter(id=run.id).update(status="pending", worker="", lease_expires_at=None)
        thread.join(BOUND / 2)
        assert not thread.is_alive(), "the old holder kept its tool running"
    finally:
        release.set()
        thread.join(BOUND)

    run.refresh_from_db()
    assert (run.status, run.attempts, run.output) == ("pending", 1, None)
    assert returned[0].status == "pending"


def test_a_process_that_stalled_after_its_claim_does_not_start_the_tool(
    code_tool, owner, monkeypatch
):
    """Between the claim and the tool's start the process stalls for longer than its
    lease, and the run is taken back meanwhile: the tool never starts there."""
    from agents_core.definitions import create_tool
    from tools_app.services import runs

    calls = []
    tool = code_tool(
        create_tool(
            id="rec_counts",
            description="Counts its calls.",
            execution_mode="async",
            execute=lambda data, context: calls.append(context.attempt) or {"ok": True},
        )
    )
    run = ToolRun.objects.create(
        tool=tool, status="pending", mode="async", input={}, created_by=owner
    )
    claim = runs.tool_run_claim

    def claim_then_stall(**kwargs):
        claimed = claim(**kwargs)
        # What happens while this process stalls: its lease expires, recovery takes the
        # run back and another process claims it (attempt 2).
        ToolRun.objects.filter(id=run.id).update(attempts=2, worker="other-host:2")
        return claimed

    monkeypatch.setattr(runs, "tool_run_claim", claim_then_stall)

    tool_run_process(run_id=run.id)

    assert calls == []
    run.refresh_from_db()
    assert (run.status, run.attempts, run.worker, run.output) == (
        "running",
        2,
        "other-host:2",
        None,
    )


@pytest.mark.django_db(transaction=True)
def test_recovery_requeues_an_expired_run_once_and_fails_it_after_the_last_attempt(
    journal_tool, owner, settings, monkeypatch
):
    settings.STUDIO_TOOL_RUN_MAX_ATTEMPTS = 2
    sent = []
    monkeypatch.setattr(runs, "tool_run_send", sent.append)
    past = timezone.now() - timedelta(seconds=1)
    run = ToolRun.objects.create(
        tool=journal_tool,
        status="running",
        mode="async",
        input={},
        attempts=1,
        worker="dead-host:1",
        lease_expires_at=past,
        created_by=owner,
    )

    reports = [tool_runs_recover(), tool_runs_recover()]

    assert [r["requeued"] for r in reports] == [[str(run.id)], []]
    assert sent == [str(run.id)]
    run.refresh_from_db()
    assert (run.status, run.worker, run.lease_expires_at) == ("pending", "", None)

    ToolRun.objects.filter(id=run.id).update(
        status="running", attempts=2, worker="dead-host:2", lease_expires_at=past
    )
    report = tool_runs_recover()

    assert report["failed"] == [str(run.id)]
    run.refresh_from_db()
    assert run.status == "failed"
    assert "dead-host:2" in run.error and "given up after 2 attempts" in run.error
    assert sent == [str(run.id)]


def test_an_async_http_tool_sends_the_runs_idempotency_key(
    make_tool, owner, local_server, private_network
):
    local_server.route("/charge", body={"ok": True})
    url = private_network(f"{local_server.url}/charge")
    plain = make_tool(kind="http", config={"url": url, "method": "POST"}, execution_mode="async")
    own = make_tool(
        kind="http",
        config={"url": url, "method": "POST", "headers": {"idempotency-key": "mine-{order}"}},
        execution_mode="async",
    )
    runs = [
        ToolRun.objects.create(tool=tool, status="pending", mode="async", input={"order": 7})
        for tool in (plain, own)
    ]

    for run in runs:
        tool_run_execute(str(run.id))
    sync = tool_execute(tool=plain, input={"order": 8}, user=owner)

    assert [status_of(run.id) for run in runs] == ["completed", "completed"]
    assert sync.status == "completed"
    keys = [request["headers"].get("idempotency-key") for request in local_server.requests]
    # The run's id; a header the tool sets itself wins; a sync run is never retried.
    assert keys == [str(runs[0].id), "mine-7", None]
