"""/ws/tool-runs/: pushes `{"type": "tool-run", ...ToolRun JSON}` to the signed-in user
when one of their async tool runs finishes (tools_app.services.runs.tool_run_notify), and
`{"type": "tool-run-state", "watch", "id", "note"}` while one of their runs waits for a
sandbox slot (`note`: why; null once it runs: services.runs.tool_run_waiter).

It takes no messages: any frame a client sends is answered with an error event
(common.websocket), and the socket stays open."""

from __future__ import annotations

from typing import Any

from common.websocket import JsonFrameConsumer
from tools_app.services.runs import tool_runs_group


class ToolRunConsumer(JsonFrameConsumer):
    async def connect(self) -> None:
        user = self.scope.get("user")
        if user is None or not user.is_authenticated:
            await self.close(code=4401)
            return
        self.group = tool_runs_group(user.id)
        await self.channel_layer.group_add(self.group, self.channel_name)
        await self.accept()

    async def disconnect(self, code: int) -> None:
        if hasattr(self, "group"):
            await self.channel_layer.group_discard(self.group, self.channel_name)

    async def tool_run(self, event: dict[str, Any]) -> None:
        await self.send_json({"type": "tool-run", **event["run"]})

    async def tool_run_state(self, event: dict[str, Any]) -> None:
        await self.send_json({"type": "tool-run-state", **event["state"]})
