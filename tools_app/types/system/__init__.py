"""Built-in system tools (web_fetch, web_search, ask_user, submit_plan here; the task_*
tools live with the runtime). They are code definitions of kind "system"
(tools_app.types.system.tools, imported by tools_app.tools so the registry syncs them),
executed exactly like code tools."""

from __future__ import annotations

from typing import Any, ClassVar

from tools_app.types.code import CodeToolType


class SystemToolType(CodeToolType):
    kind = "system"
    label = "Built-in system tool"
    config_schema: ClassVar[dict[str, Any]] = {
        "type": "object",
        "description": "Built-in tools are configured by the studio; nothing to set here.",
    }


tool_type = SystemToolType()
