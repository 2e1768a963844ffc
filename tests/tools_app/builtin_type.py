"""A registered type that users may not create tools of (like the built-in system tools)."""

from __future__ import annotations

from tools_app.types import ToolType


class BuiltinToolType(ToolType):
    kind = "test_builtin"
    label = "Built-in (tests)"
    creatable = False


tool_type = BuiltinToolType()
