"""Built-in system tools, all here: web_fetch, web_search (its searches in
tools_app.websearch), ask_user, submit_plan (tools.py) and task_write, task_update,
task_complete, task_check (tasks.py). They are code definitions of kind "system"
(imported by tools_app.tools so the registry syncs them), executed exactly like code
tools."""

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
