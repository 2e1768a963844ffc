"""agents_core's models, one module per area; import them all here for Django."""

from __future__ import annotations

from .core import (
    OPEN_CALLS,
    Agent,
    AgentTool,
    Message,
    MessageRole,
    Run,
    RunStatus,
    RunWorkerBeat,
    Source,
    StreamEvent,
    SubAgent,
    Thread,
    ToolCall,
    ToolCallStatus,
)
from .editor import EditLock, EditorOverride, LockEnd, Revision, RevisionKind
from .imports import ImportJob, ImportJobStatus
from .signals import (
    NotificationPriority,
    NotificationRecord,
    NotificationStatus,
    Signal,
    SignalDecision,
    SignalStatus,
    SignalType,
)
from .tasks import TaskItem, TaskStatus

__all__ = [
    "OPEN_CALLS",
    "Agent",
    "AgentTool",
    "EditLock",
    "EditorOverride",
    "ImportJob",
    "ImportJobStatus",
    "LockEnd",
    "Revision",
    "RevisionKind",
    "Message",
    "MessageRole",
    "NotificationPriority",
    "NotificationRecord",
    "NotificationStatus",
    "Run",
    "RunStatus",
    "RunWorkerBeat",
    "Signal",
    "SignalDecision",
    "SignalStatus",
    "SignalType",
    "Source",
    "StreamEvent",
    "SubAgent",
    "TaskItem",
    "TaskStatus",
    "Thread",
    "ToolCall",
    "ToolCallStatus",
]
