"""/ws/evals/<suite_run_id>/: the progress of one of the user's suite runs, pushed as
`{"type": "progress", "run": {...}, "result": {...}|null}` (the first message is the
current state, so a page that connects late misses nothing it needs). Another user's
run, or none: closed with 4404 before accepting; nobody signed in: 4401."""

from __future__ import annotations

from typing import Any

from channels.db import database_sync_to_async

from common.websocket import JsonFrameConsumer
from evals.selectors import jsonable, suite_run_get, suite_run_info
from evals.services.suite_runs import suite_run_group


class SuiteRunProgressConsumer(JsonFrameConsumer):
    async def connect(self) -> None:
        user = self.scope.get("user")
        if user is None or not user.is_authenticated:
            await self.close(code=4401)
            return
        suite_run_id = self.scope["url_route"]["kwargs"]["suite_run_id"]
        state = await database_sync_to_async(_state)(user, suite_run_id)
        if state is None:
            await self.close(code=4404)
            return
        self.group = suite_run_group(suite_run_id)
        await self.channel_layer.group_add(self.group, self.channel_name)
        await self.accept()
        await self.send_json({"type": "progress", "run": state, "result": None})

    async def disconnect(self, code: int) -> None:
        if hasattr(self, "group"):
            await self.channel_layer.group_discard(self.group, self.channel_name)

    async def evals_progress(self, event: dict[str, Any]) -> None:
        await self.send_json({"type": "progress", "run": event["run"], "result": event["result"]})


def _state(user: Any, suite_run_id: int) -> dict[str, Any] | None:
    suite_run = suite_run_get(user=user, suite_run_id=suite_run_id)
    return None if suite_run is None else jsonable(suite_run_info(suite_run))
