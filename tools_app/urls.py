from __future__ import annotations

from django.urls import path

from tools_app.api import tools

urlpatterns: list = []

# Tools and tool types (issue 2).
urlpatterns += [
    path("tools/", tools.ToolListApi.as_view(), name="tool-list"),
    path("tools/<str:name>/", tools.ToolDetailApi.as_view(), name="tool-detail"),
    path("tool-types/", tools.ToolTypeListApi.as_view(), name="tool-type-list"),
]

# Running tools (issue 3, tools-engine).
from tools_app.api import runs as tool_runs  # noqa: E402

urlpatterns += [
    path("tools/<str:name>/execute", tool_runs.ToolExecuteApi.as_view(), name="tool-execute"),
    path("tools/<str:name>/runs/", tool_runs.ToolRunListApi.as_view(), name="tool-run-list"),
    path("tools/<str:name>/schema", tool_runs.ToolSchemaApi.as_view(), name="tool-schema"),
    path("tool-runs/<uuid:run_id>/", tool_runs.ToolRunDetailApi.as_view(), name="tool-run-detail"),
]
