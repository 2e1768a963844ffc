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
