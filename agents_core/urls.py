from __future__ import annotations

from django.urls import path

from agents_core.api import agent_io, agents
from agents_core.api import editor as editor_api

urlpatterns: list = []

# Agents, tool bindings and sub-agent bindings.
urlpatterns += [
    path("agents/", agents.AgentListApi.as_view(), name="agent-list"),
    path("agents/import", agent_io.AgentImportApi.as_view(), name="agent-import"),
    path(
        "agents/import-jobs/<uuid:job_id>/",
        agent_io.ImportJobDetailApi.as_view(),
        name="agent-import-job",
    ),
    path("agent-templates/", agent_io.AgentTemplateListApi.as_view(), name="agent-templates"),
    path("agents/<slug:slug>/export", agent_io.AgentExportApi.as_view(), name="agent-export"),
    path(
        "agents/<slug:slug>/instructions-preview",
        agent_io.InstructionsPreviewApi.as_view(),
        name="agent-instructions-preview",
    ),
    path(
        "agents/<slug:slug>/duplicate",
        agent_io.AgentDuplicateApi.as_view(),
        name="agent-duplicate",
    ),
    path("agents/<slug:slug>/", agents.AgentDetailApi.as_view(), name="agent-detail"),
    path("agents/<slug:slug>/tools/", agents.AgentToolListApi.as_view(), name="agent-tool-list"),
    path(
        "agents/<slug:slug>/tools/<str:key>/",
        agents.AgentToolDetailApi.as_view(),
        name="agent-tool-detail",
    ),
    path(
        "agents/<slug:slug>/subagents/",
        agents.AgentSubAgentListApi.as_view(),
        name="agent-subagent-list",
    ),
    path(
        "agents/<slug:slug>/subagents/<str:key>/",
        agents.AgentSubAgentDetailApi.as_view(),
        name="agent-subagent-detail",
    ),
]

# Editor overrides, locks and revisions.
_agent = "agents/<slug:slug>"
_revision = f"{_agent}/revisions/<int:revision_id>"
urlpatterns += [
    path(f"{_agent}/overrides/", editor_api.EditorOverridesApi.as_view(), name="agent-overrides"),
    path(
        f"{_agent}/overrides/reset",
        editor_api.EditorResetApi.as_view(),
        name="agent-overrides-reset",
    ),
    path(f"{_agent}/lock/", editor_api.EditLockApi.as_view(), name="agent-lock"),
    path(f"{_agent}/lock/break", editor_api.EditLockBreakApi.as_view(), name="agent-lock-break"),
    path(f"{_agent}/revisions/", editor_api.RevisionListApi.as_view(), name="agent-revisions"),
    path(f"{_revision}/", editor_api.RevisionDetailApi.as_view(), name="agent-revision"),
    path(
        f"{_revision}/restore",
        editor_api.RevisionRestoreApi.as_view(),
        name="agent-revision-restore",
    ),
]

# Thread signals, message queueing and the notification inbox.
from agents_core.api import signals as signals_api  # noqa: E402

_thread = "threads/<uuid:thread_id>"
urlpatterns += [
    path(
        f"{_thread}/send-message",
        signals_api.ThreadSendMessageApi.as_view(),
        name="thread-send-message",
    ),
    path(
        f"{_thread}/queue-message",
        signals_api.ThreadQueueMessageApi.as_view(),
        name="thread-queue-message",
    ),
    path(f"{_thread}/signals/", signals_api.ThreadSignalsApi.as_view(), name="thread-signals"),
    path(
        f"{_thread}/state-signals/",
        signals_api.ThreadStateSignalApi.as_view(),
        name="thread-state-signals",
    ),
    path(
        f"{_thread}/notifications/",
        signals_api.ThreadNotificationsApi.as_view(),
        name="thread-notifications",
    ),
    path(
        f"{_thread}/notifications/digest",
        signals_api.ThreadDigestApi.as_view(),
        name="thread-notifications-digest",
    ),
    path(
        f"{_thread}/subscription/",
        signals_api.ThreadSubscriptionApi.as_view(),
        name="thread-subscription",
    ),
    path(f"{_thread}/abort", signals_api.ThreadAbortApi.as_view(), name="thread-abort"),
    path(
        "agents/<slug:slug>/notification-policy",
        signals_api.AgentNotificationPolicyApi.as_view(),
        name="agent-notification-policy",
    ),
]

# Threads, their events and runs: the preview chat.
from agents_core.api import threads as threads_api  # noqa: E402

_t = "threads/<uuid:thread_id>"
_r = "runs/<uuid:run_id>"
urlpatterns += [
    path("threads/", threads_api.ThreadListApi.as_view(), name="thread-list"),
    path(f"{_t}/", threads_api.ThreadDetailApi.as_view(), name="thread-detail"),
    path(f"{_t}/messages/", threads_api.ThreadMessagesApi.as_view(), name="thread-messages"),
    path(f"{_t}/events/", threads_api.ThreadEventsApi.as_view(), name="thread-events"),
    path(f"{_t}/runs/", threads_api.ThreadRunsApi.as_view(), name="thread-runs"),
    path(f"{_t}/suspended/", threads_api.ThreadSuspendedApi.as_view(), name="thread-suspended"),
    path(f"{_t}/tasks/", threads_api.ThreadTasksApi.as_view(), name="thread-tasks"),
    path(f"{_r}/", threads_api.RunDetailApi.as_view(), name="run-detail"),
    path(f"{_r}/resume", threads_api.RunResumeApi.as_view(), name="run-resume"),
    path(f"{_r}/abort", threads_api.RunAbortApi.as_view(), name="run-abort"),
    path(
        f"{_r}/client-tool-result",
        threads_api.RunClientToolResultApi.as_view(),
        name="run-client-tool-result",
    ),
]
