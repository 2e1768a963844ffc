"""A run of the REST execute API that waits for a sandbox slot is told on /ws/tool-runs/
to its own user only (tool-run-state, named by the `watch` the caller chose), then that it
runs; a bad `watch` is refused before anything runs."""

from __future__ import annotations

import asyncio

import pytest
from asgiref.sync import sync_to_async
from channels.db import database_sync_to_async
from channels.testing import WebsocketCommunicator
from django.test import override_settings
from rest_framework.test import APIClient

from tests.tools_app.engine.sandbox_service import sandbox_service, share_held, stopped
from tests.tools_app.engine.test_python_fair_shares import SHARE_NOTE
from tools_app.consumers import ToolRunConsumer
from tools_app.models import ToolRun


async def connected(user) -> WebsocketCommunicator:  # noqa: ANN001
    communicator = WebsocketCommunicator(ToolRunConsumer.as_asgi(), "/ws/tool-runs/")
    communicator.scope["user"] = user
    assert (await communicator.connect())[0]
    return communicator


@pytest.mark.django_db(transaction=True)
async def test_a_waiting_run_is_told_to_its_users_socket_only(python_tool, owner, teammate):
    tool = await database_sync_to_async(python_tool)("return input['n'] * 2", name="doubles")
    client = APIClient()
    client.force_authenticate(owner)
    mine, theirs = await connected(owner), await connected(teammate)
    with sandbox_service("--owner-slots", "2", "--spares", "0") as service:
        # Another caller holds the owner's share of the service's pool.
        hogs = await share_held(service, f"user:{owner.pk}", 8)
        with override_settings(STUDIO_SANDBOX_URL=service.url, STUDIO_SANDBOX_TOKEN=service.token):
            body = {"input": {"n": 21}, "watch": "run-1"}
            post = sync_to_async(client.post, thread_sensitive=False)
            answer = asyncio.ensure_future(
                post(f"/api/tools/{tool.name}/execute", body, format="json")
            )
            first = await mine.receive_json_from(timeout=60)
            second = await mine.receive_json_from(timeout=60)
            response = await answer
        await stopped(hogs)
    assert await theirs.receive_nothing(timeout=0.2)
    await mine.disconnect()
    await theirs.disconnect()

    assert first == {"type": "tool-run-state", "watch": "run-1", "id": "", "note": SHARE_NOTE}
    assert second == {"type": "tool-run-state", "watch": "run-1", "id": "", "note": None}
    assert response.status_code == 200
    assert response.json()["output"] == 42


@pytest.mark.parametrize("watch", ["", "has space", "x" * 65, 7, ["run"]])
def test_a_bad_watch_is_refused_and_nothing_runs(api, python_tool, watch):
    tool = python_tool("return 1", name="one")

    response = api.post(
        f"/api/tools/{tool.name}/execute", {"input": {}, "watch": watch}, format="json"
    )

    assert response.status_code == 400
    assert response.json() == {"watch": ["At most 64 letters, digits, - or _."]}
    assert not ToolRun.objects.exists()
