from __future__ import annotations

from django.urls import path

from tools_app.api import connection, tools

urlpatterns: list = []

# Tools and tool types.
urlpatterns += [
    path("tools/", tools.ToolListApi.as_view(), name="tool-list"),
    path("tools/<str:name>/", tools.ToolDetailApi.as_view(), name="tool-detail"),
    path("tool-types/", tools.ToolTypeListApi.as_view(), name="tool-type-list"),
    path(
        "tools/<str:name>/connection",
        connection.ToolConnectionApi.as_view(),
        name="tool-connection",
    ),
    path(
        "tool-types/python/isolation/",
        tools.PythonIsolationApi.as_view(),
        name="python-isolation",
    ),
]

# Running tools.
from tools_app.api import runs as tool_runs  # noqa: E402

urlpatterns += [
    path("tools/<str:name>/execute", tool_runs.tool_execute_view, name="tool-execute"),
    path("tools/<str:name>/runs/", tool_runs.ToolRunListApi.as_view(), name="tool-run-list"),
    path("tools/<str:name>/schema", tool_runs.ToolSchemaApi.as_view(), name="tool-schema"),
    path("tool-runs/<uuid:run_id>/", tool_runs.ToolRunDetailApi.as_view(), name="tool-run-detail"),
]

# External tool sources: OpenAPI, MCP, A2A.
from tools_app.api import sources  # noqa: E402

urlpatterns += [
    path("sources/", sources.SourceListApi.as_view(), name="source-list"),
    path("sources/<int:source_id>/", sources.SourceDetailApi.as_view(), name="source-detail"),
    path("sources/openapi/preview", sources.OpenApiPreviewApi.as_view(), name="openapi-preview"),
    path("sources/openapi/import", sources.OpenApiImportApi.as_view(), name="openapi-import"),
    path(
        "sources/<int:source_id>/openapi/diff",
        sources.OpenApiDiffApi.as_view(),
        name="openapi-diff",
    ),
    path(
        "sources/<int:source_id>/openapi/reimport",
        sources.OpenApiReimportApi.as_view(),
        name="openapi-reimport",
    ),
    path("sources/mcp/", sources.McpRegisterApi.as_view(), name="mcp-register"),
    path(
        "sources/<int:source_id>/mcp/refresh", sources.McpRefreshApi.as_view(), name="mcp-refresh"
    ),
    path("sources/<int:source_id>/mcp/pick", sources.McpPickApi.as_view(), name="mcp-pick"),
    path("sources/a2a/", sources.A2AAddApi.as_view(), name="a2a-add"),
    path(
        "sources/<int:source_id>/connection",
        sources.SourceConnectionApi.as_view(),
        name="source-connection",
    ),
]

# The address guard's verdict on a URL, for the forms and the tool page.
from tools_app.api import net as net_api  # noqa: E402

urlpatterns += [
    path("url-check", net_api.UrlCheckApi.as_view(), name="url-check"),
    path("tools/<str:name>/network", net_api.ToolNetworkApi.as_view(), name="tool-network"),
]

# The connector catalogue: ready-made OpenAPI tool sets (tools_app/connectors).
from tools_app.api import connectors  # noqa: E402

urlpatterns += [
    path("connectors/", connectors.ConnectorListApi.as_view(), name="connector-list"),
    path(
        "connectors/<slug:slug>/", connectors.ConnectorDetailApi.as_view(), name="connector-detail"
    ),
    path("connectors/<slug:slug>/add", connectors.ConnectorAddApi.as_view(), name="connector-add"),
]

# The user's web search setting (the web_search system tool).
from tools_app.api import websearch  # noqa: E402

urlpatterns += [
    path("settings/web-search/", websearch.WebSearchSettingApi.as_view(), name="web-search"),
    path("settings/web-search/test", websearch.WebSearchTestApi.as_view(), name="web-search-test"),
]
