"""A tool type registered by the tests (tools_app.types.register), apart from the real ones
that other parts of the studio register, so that the API tests do not depend on them."""

from __future__ import annotations

from typing import Any, ClassVar

from tools_app.types import ToolType


class EchoToolType(ToolType):
    kind = "test_echo"
    label = "Echo (tests)"
    config_schema: ClassVar[dict[str, Any]] = {
        "type": "object",
        "properties": {"prefix": {"type": "string"}, "repeat": {"type": "integer", "minimum": 1}},
        "additionalProperties": False,
    }
    credential_fields: ClassVar[list[str]] = ["token"]

    async def execute(self, tool: Any, input: Any, context: Any) -> Any:  # noqa: A002
        return {"echo": input, "prefix": tool.config.get("prefix", "")}


tool_type = EchoToolType()
