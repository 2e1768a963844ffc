"""/ws/evals/<id>/: the owner gets the suite run's state, then one event per finished
case; another user, or nobody signed in, is refused."""

from __future__ import annotations

import pytest
from channels.db import database_sync_to_async
from channels.routing import URLRouter
from channels.testing import WebsocketCommunicator

from evals.routing import websocket_urlpatterns
from evals.services.suite_runs import suite_run_execute, suite_run_start
from tests.knowledge.test_progress_ws import ScopeUser

pytestmark = pytest.mark.django_db(transaction=True)


def communicator(user, suite_run_id: int) -> WebsocketCommunicator:
    app = ScopeUser(URLRouter(websocket_urlpatterns), user)
    return WebsocketCommunicator(app, f"/ws/evals/{suite_run_id}/")


async def test_the_owner_follows_a_suite_run(demo, owner):
    suite_run = await database_sync_to_async(suite_run_start)(suite=demo, user=owner, enqueue=False)
    ws = communicator(owner, suite_run.pk)
    connected, _ = await ws.connect()
    assert connected
    first = await ws.receive_json_from(timeout=5)
    assert first["run"]["status"] == "queued" and first["run"]["summary"]["done"] == 0

    await database_sync_to_async(suite_run_execute)(suite_run_id=suite_run.pk)
    events = [await ws.receive_json_from(timeout=10) for _ in range(9)]
    await ws.disconnect()

    assert events[0]["run"]["status"] == "running" and events[0]["result"] is None
    # Cases finish in parallel: each event counts at least its own result.
    done = [e["run"]["summary"]["done"] for e in events[1:8]]
    assert all(1 <= n <= 7 for n in done) and max(done) == 7
    assert len({e["result"]["id"] for e in events[1:8]}) == 7
    names = {e["result"]["caseName"] for e in events[1:8]}
    assert "built to fail: regex miss" in names and len(names) == 7
    assert events[8]["run"]["status"] == "failed" and events[8]["run"]["summary"]["done"] == 7


@pytest.mark.parametrize("who", ["outsider", "nobody"])
async def test_others_are_refused(demo, owner, outsider, who):
    suite_run = await database_sync_to_async(suite_run_start)(suite=demo, user=owner, enqueue=False)
    ws = communicator(outsider if who == "outsider" else None, suite_run.pk)
    connected, code = await ws.connect()
    assert not connected and code == (4404 if who == "outsider" else 4401)
