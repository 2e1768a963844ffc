"""/ws/knowledge/<slug>/: the owner gets the current progress, then the events an
ingestion publishes; another user, or nobody signed in, is refused."""

from __future__ import annotations

import pytest
from channels.db import database_sync_to_async
from channels.routing import URLRouter
from channels.testing import WebsocketCommunicator

from knowledge.routing import websocket_urlpatterns
from knowledge.services.documents import document_add_text
from knowledge.services.ingest import document_ingest

pytestmark = pytest.mark.django_db(transaction=True)


class ScopeUser:
    """Puts a user in the scope, as AuthMiddlewareStack does from the session cookie."""

    def __init__(self, app, user):
        self.app, self.user = app, user

    async def __call__(self, scope, receive, send):
        from django.contrib.auth.models import AnonymousUser

        scope = {**scope, "user": self.user or AnonymousUser()}
        return await self.app(scope, receive, send)


def communicator(user, slug: str = "docs") -> WebsocketCommunicator:
    app = ScopeUser(URLRouter(websocket_urlpatterns), user)
    return WebsocketCommunicator(app, f"/ws/knowledge/{slug}/")


async def test_the_owner_sees_the_progress_of_an_ingestion(owner, fts_kb):
    ws = communicator(owner)
    connected, _ = await ws.connect()
    assert connected
    first = await ws.receive_json_from(timeout=5)
    assert first["type"] == "progress" and first["progress"]["documents"] == 0
    document = await database_sync_to_async(document_add_text)(kb=fts_kb, text="one " * 2000)
    await database_sync_to_async(document_ingest)(document_id=document.id)
    statuses = []
    while True:
        event = await ws.receive_json_from(timeout=10)
        if event["document"]:
            statuses.append(event["document"]["status"])
        if event["document"] and event["document"]["status"] == "ready":
            break
    assert statuses[0] == "parsing" and "embedding" in statuses
    assert event["progress"]["ready"] == 1 and event["progress"]["active"] == 0
    assert event["document"]["chunks_done"] == event["document"]["chunk_count"] > 1
    await ws.disconnect()


@pytest.mark.parametrize("who", ["outsider", "anonymous", "missing"])
async def test_others_are_refused(who, outsider, fts_kb):
    user = {"outsider": outsider, "anonymous": None, "missing": fts_kb.owner}[who]
    ws = communicator(user, "nope" if who == "missing" else "docs")
    connected, code = await ws.connect()
    assert not connected
    assert code == (4401 if who == "anonymous" else 4404)
    await ws.disconnect()
