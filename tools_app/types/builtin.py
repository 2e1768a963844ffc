"""The tool types that ship with the studio (imported by ToolsAppConfig.ready)."""

from __future__ import annotations

from tools_app.types import register

for _kind in ("code", "python", "http", "agent", "client", "system", "widget"):
    register(_kind, f"tools_app.types.{_kind}")
