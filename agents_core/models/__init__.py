"""agents_core's models, one module per area; import them all here for Django."""

from __future__ import annotations

from .core import (
    Agent,
    AgentTool,
    Message,
    MessageRole,
    Run,
    RunStatus,
    Source,
    StreamEvent,
    SubAgent,
    Thread,
    ToolCall,
    ToolCallStatus,
)

__all__ = [
    "Agent",
    "AgentTool",
    "Message",
    "MessageRole",
    "Run",
    "RunStatus",
    "Source",
    "StreamEvent",
    "SubAgent",
    "Thread",
    "ToolCall",
    "ToolCallStatus",
]
