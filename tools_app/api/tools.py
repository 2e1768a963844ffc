"""REST endpoints for tools: /api/tools/, /api/tools/<name>/, /api/tool-types/, and
/api/tool-types/python/isolation/ (how this server isolates Python tool runs)."""

from __future__ import annotations

from django.db.models import QuerySet
from drf_spectacular.utils import OpenApiParameter, extend_schema, inline_serializer
from rest_framework import generics, serializers, status
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from common.exceptions import NotFound
from tools_app.models import Tool
from tools_app.selectors import tool_get, tool_list
from tools_app.serializers import (
    ToolInputSerializer,
    ToolOutputSerializer,
    ToolTypeSerializer,
    ToolUpdateInputSerializer,
)
from tools_app.services.tools import (
    tool_create,
    tool_delete,
    tool_ensure_editable,
    tool_update,
)
from tools_app.types import all_types
from tools_app.types.python import isolation_status

TAG = ["tools"]


def tool_or_404(request: Request, name: str) -> Tool:
    tool = tool_get(user=request.user, name=name)
    if tool is None:
        raise NotFound(f"No tool named {name!r}.", code="not_found")
    return tool


@extend_schema(tags=TAG)
class ToolListApi(generics.ListAPIView):
    """Tools the caller can use: code and built-in tools, and their own studio tools."""

    serializer_class = ToolOutputSerializer

    @extend_schema(
        parameters=[
            OpenApiParameter("kind", str, description="Only tools of this type."),
            OpenApiParameter("source", str, enum=["code", "studio"]),
        ]
    )
    def get(self, request: Request, *args: object, **kwargs: object) -> Response:
        return super().get(request, *args, **kwargs)

    def get_queryset(self) -> QuerySet[Tool]:
        tools = tool_list(user=self.request.user).select_related("owner")
        for field in ("kind", "source"):
            if value := self.request.query_params.get(field):
                tools = tools.filter(**{field: value})
        return tools

    @extend_schema(request=ToolInputSerializer, responses={201: ToolOutputSerializer})
    def post(self, request: Request) -> Response:
        serializer = ToolInputSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        tool = tool_create(owner=request.user, **serializer.validated_data)
        return Response(ToolOutputSerializer(tool).data, status=status.HTTP_201_CREATED)


@extend_schema(tags=TAG)
class ToolDetailApi(APIView):
    @extend_schema(responses=ToolOutputSerializer)
    def get(self, request: Request, name: str) -> Response:
        return Response(ToolOutputSerializer(tool_or_404(request, name)).data)

    @extend_schema(request=ToolUpdateInputSerializer, responses=ToolOutputSerializer)
    def put(self, request: Request, name: str) -> Response:
        return self._update(request, name, partial=False)

    @extend_schema(request=ToolUpdateInputSerializer(partial=True), responses=ToolOutputSerializer)
    def patch(self, request: Request, name: str) -> Response:
        return self._update(request, name, partial=True)

    @extend_schema(responses={204: None})
    def delete(self, request: Request, name: str) -> Response:
        tool_delete(tool=tool_or_404(request, name))
        return Response(status=status.HTTP_204_NO_CONTENT)

    def _update(self, request: Request, name: str, *, partial: bool) -> Response:
        tool = tool_or_404(request, name)
        tool_ensure_editable(tool)  # a code tool answers 403 before any field is judged
        serializer = ToolUpdateInputSerializer(tool, data=request.data, partial=partial)
        serializer.is_valid(raise_exception=True)
        tool = tool_update(tool=tool, data=serializer.validated_data)
        return Response(ToolOutputSerializer(tool).data)


@extend_schema(tags=TAG)
class ToolTypeListApi(APIView):
    """The registered tool types, with the JSON Schema of each type's config."""

    @extend_schema(responses=ToolTypeSerializer(many=True))
    def get(self, request: Request) -> Response:
        types = sorted(all_types(), key=lambda t: t.kind)
        return Response(ToolTypeSerializer(types, many=True).data)


PYTHON_ISOLATION = inline_serializer(
    "PythonIsolation",
    {
        "mode": serializers.CharField(allow_null=True, help_text="bwrap, rlimits, or null."),
        "strong": serializers.BooleanField(),
        "own_uid": serializers.BooleanField(),
        "cgroup": serializers.CharField(allow_null=True, help_text="cgroup v1, cgroup v2, null."),
        "cgroup_problem": serializers.CharField(),
        "refusal": serializers.CharField(help_text="Why Python tools are refused; empty if not."),
        "label": serializers.CharField(help_text="What a run gets, as the console shows it."),
        "limits": serializers.DictField(),
        "service": serializers.CharField(allow_null=True),
    },
)


@extend_schema(tags=TAG)
class PythonIsolationApi(APIView):
    """What a Python tool run gets on this server: the isolation mode, whether it is
    strong, the limits, and, when Python tools are refused, why and what to change."""

    @extend_schema(responses=PYTHON_ISOLATION)
    def get(self, request: Request) -> Response:
        return Response(isolation_status())
