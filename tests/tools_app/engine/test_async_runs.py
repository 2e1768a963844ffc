"""Async tool runs in a real Celery worker against Redis: completion, the push to the
owner's websocket, a worker killed mid-task, idempotent claims and completion.
(Leases, recovery by the workers themselves and the idempotency key: test_recovery.py.)"""

from __future__ import annotations

import os
import signal
import time
from datetime import timedelta

import pytest
from asgiref.sync import async_to_sync
from channels.db import database_sync_to_async
from channels.testing import WebsocketCommunicator
from django.conf import settings
from django.test import override_settings
from django.utils import timezone

from studio.settings import redis_channel_layer
from tests.conftest import celery_worker_process
from tools_app.consumers import ToolRunConsumer
from tools_app.models import ToolRun
from tools_app.services.execute import tool_execute
from tools_app.services.runs import (
    tool_run_notify,
    tool_run_process,
    tool_runs_sweep,
)
from tools_app.tasks import tool_run_execute

# The prefix the worker processes use (studio/settings_test.py), so that their pushes
# reach this process.
REDIS_LAYER = {
    "default": redis_channel_layer(
        settings.REDIS_URL,
        kind=settings.STUDIO_CHANNEL_LAYER,
        prefix=os.environ.get("STUDIO_CHANNEL_PREFIX", "studio-test"),
    )
}


def wait_until(condition, *, within: float = 60.0, every: float = 0.1):
    """Poll `condition` until it is truthy; a bound on the test, not a timed assertion."""
    deadline = time.monotonic() + within
    while time.monotonic() < deadline:
        value = condition()
        if value:
            return value
        time.sleep(every)
    raise AssertionError(f"condition not met within {within} s")


def status_of(run_id) -> str:
    return ToolRun.objects.get(id=run_id).status


@pytest.fixture
def python_tool(make_tool, owner):
    def make(code: str, **fields):
        fields.setdefault("timeout_seconds", 10)
        return make_tool(
            kind="python", owner=owner, config={"code": code}, execution_mode="async", **fields
        )

    return make


async def _connect(user) -> WebsocketCommunicator:
    communicator = WebsocketCommunicator(ToolRunConsumer.as_asgi(), "/ws/tool-runs/")
    communicator.scope["user"] = user
    connected, _ = await communicator.connect()
    assert connected
    return communicator


@pytest.mark.celery_worker
@pytest.mark.django_db(transaction=True)
def test_an_async_run_completes_in_a_worker_and_is_pushed_to_its_owner(
    celery_worker, python_tool, owner
):
    tool = python_tool("print('working')\nreturn {'double': input['n'] * 2}")

    async def scenario():
        communicator = await _connect(owner)
        run = await database_sync_to_async(tool_execute)(
            tool=tool, input={"n": 21}, user=owner, mode="async"
        )
        pending = run.status
        message = await communicator.receive_json_from(timeout=60)
        await communicator.disconnect()
        return run, pending, message

    with override_settings(CHANNEL_LAYERS=REDIS_LAYER):
        run, pending, message = async_to_sync(scenario)()

    assert pending == "pending"
    assert message["type"] == "tool-run"
    assert message["id"] == str(run.id)
    assert message["status"] == "completed"
    assert message["output"] == {"double": 42}
    assert "working" in message["logs"]
    run.refresh_from_db()
    assert (run.status, run.attempts, run.output) == ("completed", 1, {"double": 42})


@pytest.mark.celery_worker
@pytest.mark.django_db(transaction=True)
def test_a_run_whose_worker_was_killed_is_retried_and_completes(python_tool, owner):
    tool = python_tool("import time\ntime.sleep(2)\nreturn 'done'", timeout_seconds=3)

    with celery_worker_process() as worker:
        run = tool_execute(tool=tool, input={}, user=owner, mode="async")
        wait_until(lambda: status_of(run.id) == "running")
        os.kill(worker.pid, signal.SIGKILL)
        worker.wait()
    run.refresh_from_db()
    assert (run.status, run.attempts) == ("running", 1)

    # No beat and no sweep called here: the new worker takes the run back once its lease
    # has expired.
    with celery_worker_process():
        wait_until(lambda: status_of(run.id) in ("completed", "failed"))

    run.refresh_from_db()
    assert run.status == "completed", run.error
    assert run.output == "done"
    assert run.attempts == 2


@pytest.mark.django_db(transaction=True)
def test_a_run_lost_too_many_times_is_failed_visibly_and_pushed(python_tool, owner, settings):
    tool = python_tool("return 1", timeout_seconds=5)
    limit = settings.STUDIO_TOOL_RUN_MAX_ATTEMPTS
    run = ToolRun.objects.create(
        tool=tool,
        status="running",
        mode="async",
        input={},
        attempts=limit,
        started_at=timezone.now() - timedelta(minutes=10),
        lease_expires_at=timezone.now() - timedelta(minutes=9),
        worker="gone-host:4242",
        created_by=owner,
    )

    async def scenario():
        communicator = await _connect(owner)
        report = await database_sync_to_async(tool_runs_sweep)()
        message = await communicator.receive_json_from(timeout=10)
        await communicator.disconnect()
        return report, message

    report, message = async_to_sync(scenario)()

    assert report["failed"] == [str(run.id)]
    run.refresh_from_db()
    assert run.status == "failed"
    assert f"given up after {limit} attempts" in run.error
    assert "gone-host:4242" in run.error
    assert run.lease_expires_at is None and run.finished_at is not None
    assert message["id"] == str(run.id) and message["status"] == "failed"


def test_the_sweep_leaves_runs_whose_lease_is_live(python_tool, owner):
    tool = python_tool("return 1", timeout_seconds=5)
    run = ToolRun.objects.create(
        tool=tool,
        status="running",
        mode="async",
        input={},
        attempts=1,
        started_at=timezone.now() - timedelta(minutes=10),
        lease_expires_at=timezone.now() + timedelta(minutes=1),
        created_by=owner,
    )

    report = tool_runs_sweep()

    assert str(run.id) not in report["requeued"] + report["failed"]
    assert status_of(run.id) == "running"


def test_delivering_the_task_twice_executes_the_tool_once(
    make_tool, owner, local_server, private_network
):
    private_network(local_server.url)
    local_server.route("/hit", body={"ok": True})
    tool = make_tool(
        kind="http", owner=owner, config={"url": f"{local_server.url}/hit"}, execution_mode="async"
    )
    run = ToolRun.objects.create(
        tool=tool, status="pending", mode="async", input={}, created_by=owner
    )

    tool_run_execute(str(run.id))
    tool_run_execute(str(run.id))

    run.refresh_from_db()
    assert run.status == "completed"
    assert run.attempts == 1
    assert len(local_server.requests) == 1


def test_a_completed_run_is_never_claimed_again(python_tool, owner):
    tool = python_tool("return 1")
    run = ToolRun.objects.create(
        tool=tool,
        status="completed",
        mode="async",
        input={},
        output=7,
        attempts=1,
        created_by=owner,
    )

    assert tool_run_process(run_id=run.id) is None
    run.refresh_from_db()
    assert (run.status, run.output, run.attempts) == ("completed", 7, 1)


@pytest.mark.django_db(transaction=True)
def test_the_push_reaches_only_the_runs_owner(python_tool, owner, outsider):
    tool = python_tool("return 1")
    run = ToolRun.objects.create(
        tool=tool, status="completed", mode="async", input={}, output=1, created_by=owner
    )

    async def scenario():
        mine, theirs = await _connect(owner), await _connect(outsider)
        await database_sync_to_async(tool_run_notify)(run_id=run.id)
        message = await mine.receive_json_from(timeout=5)
        nothing = await theirs.receive_nothing(timeout=0.3)
        await mine.disconnect()
        await theirs.disconnect()
        return message, nothing

    message, nothing = async_to_sync(scenario)()

    assert message["id"] == str(run.id)
    assert nothing is True


@pytest.mark.django_db(transaction=True)
def test_anonymous_websockets_are_refused():
    from django.contrib.auth.models import AnonymousUser

    async def scenario():
        communicator = WebsocketCommunicator(ToolRunConsumer.as_asgi(), "/ws/tool-runs/")
        communicator.scope["user"] = AnonymousUser()
        connected, _ = await communicator.connect()
        return connected

    assert async_to_sync(scenario)() is False


@pytest.mark.celery_worker
@pytest.mark.django_db(transaction=True)
def test_a_pending_run_whose_message_was_lost_is_enqueued_again(celery_worker, python_tool, owner):
    tool = python_tool("return 'found'")
    # A pending row with no message in the broker (as if the enqueue was lost).
    run = ToolRun.objects.create(
        tool=tool, status="pending", mode="async", input={}, created_by=owner
    )
    ToolRun.objects.filter(id=run.id).update(created_at=timezone.now() - timedelta(hours=1))

    report = tool_runs_sweep()
    wait_until(lambda: status_of(run.id) == "completed")

    assert report["reenqueued"] == [str(run.id)]
    run.refresh_from_db()
    assert (run.output, run.attempts) == ("found", 1)


@pytest.mark.django_db(transaction=True)
def test_the_route_is_served_by_the_studio_asgi_app_with_session_auth(python_tool, owner):
    from django.test import Client

    from studio.asgi import application

    client = Client()
    client.force_login(owner)
    cookie = f"sessionid={client.cookies['sessionid'].value}".encode()
    tool = python_tool("return 1")
    run = ToolRun.objects.create(
        tool=tool, status="completed", mode="async", input={}, output=1, created_by=owner
    )

    async def scenario():
        communicator = WebsocketCommunicator(
            application,
            "/ws/tool-runs/",
            headers=[
                (b"origin", b"http://127.0.0.1"),
                (b"host", b"127.0.0.1"),
                (b"cookie", cookie),
            ],
        )
        connected, _ = await communicator.connect()
        await database_sync_to_async(tool_run_notify)(run_id=run.id)
        message = await communicator.receive_json_from(timeout=5)
        await communicator.disconnect()
        anonymous = WebsocketCommunicator(
            application, "/ws/tool-runs/", headers=[(b"origin", b"http://127.0.0.1")]
        )
        refused, _ = await anonymous.connect()
        return connected, message, refused

    connected, message, refused = async_to_sync(scenario)()

    assert connected is True
    assert message["type"] == "tool-run" and message["id"] == str(run.id)
    assert refused is False
