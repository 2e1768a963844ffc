"""/ws/knowledge/<slug>/: the ingestion progress of one of the user's bases, pushed as
`{"type": "progress", "progress": {...}, "document": {...}|null}` (the first message is
the current state). Another user's base, or none: closed with 4404 before accepting. It
takes no client frames: each one is answered with an error event, and the socket stays
open."""

from __future__ import annotations

from typing import Any

from channels.db import database_sync_to_async

from common.websocket import JsonFrameConsumer
from knowledge.selectors import kb_get, kb_progress
from knowledge.services.progress import kb_group


class KnowledgeProgressConsumer(JsonFrameConsumer):
    async def connect(self) -> None:
        user = self.scope.get("user")
        if user is None or not user.is_authenticated:
            await self.close(code=4401)
            return
        slug = self.scope["url_route"]["kwargs"]["slug"]
        state = await database_sync_to_async(_state)(user, slug)
        if state is None:
            await self.close(code=4404)
            return
        self.group, progress = state
        await self.channel_layer.group_add(self.group, self.channel_name)
        await self.accept()
        await self.send_json({"type": "progress", "progress": progress, "document": None})

    async def disconnect(self, code: int) -> None:
        if hasattr(self, "group"):
            await self.channel_layer.group_discard(self.group, self.channel_name)

    async def knowledge_progress(self, event: dict[str, Any]) -> None:
        await self.send_json(
            {"type": "progress", "progress": event["progress"], "document": event["document"]}
        )


def _state(user: Any, slug: str) -> tuple[str, dict[str, Any]] | None:
    kb = kb_get(user=user, slug=slug)
    if kb is None:
        return None
    return kb_group(kb.id), kb_progress(kb=kb)
