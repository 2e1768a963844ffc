"""REST endpoints for running tools: execute, run history, run detail, schema."""

from __future__ import annotations

from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import status
from rest_framework.pagination import LimitOffsetPagination
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from studio.exceptions import ApplicationError, NotFound
from tools_app.execution import tool_execute
from tools_app.models import Tool
from tools_app.selectors import tool_get
from tools_app.services.runs import tool_run_data, tool_run_get, tool_run_list

TAG = ["tool runs"]


def _tool_or_404(request: Request, name: str) -> Tool:
    tool = tool_get(user=request.user, name=name)
    if tool is None:
        raise NotFound(f"No tool named {name!r}.", code="not_found")
    return tool


@extend_schema(
    tags=TAG, request=None, responses={200: dict, 202: dict, 400: dict},
    parameters=[OpenApiParameter("mode", str, enum=["sync", "async"])],
)
class ToolExecuteApi(APIView):
    """Run a tool with `{"input": {...}}` or `{"input_text": "..."}`; `?mode=async` answers
    202 with a pending run (the result is pushed on /ws/tool-runs/ and can be polled)."""

    def post(self, request: Request, name: str) -> Response:
        tool = _tool_or_404(request, name)
        mode = request.query_params.get("mode") or tool.execution_mode
        if mode not in ("sync", "async"):
            raise ApplicationError("mode must be 'sync' or 'async'.", code="invalid_mode")
        data = request.data if isinstance(request.data, dict) else {}
        input_text = data.get("input_text")
        if input_text is not None and not isinstance(input_text, str):
            return Response({"input_text": ["Must be a string."]}, status=400)
        if input_text is None and "input" not in data:
            return Response({"input": ["Give input (JSON) or input_text (text)."]}, status=400)
        run = tool_execute(tool=tool, input=data.get("input"), input_text=input_text,
                           user=request.user, mode=mode)
        body = tool_run_data(run)
        if getattr(run, "input_rejected", False):
            return Response({"detail": run.error, "code": "invalid_input", **body}, status=400)
        code = status.HTTP_202_ACCEPTED if mode == "async" else status.HTTP_200_OK
        return Response(body, status=code)


@extend_schema(tags=TAG, responses=dict)
class ToolRunListApi(APIView):
    """The caller's runs of a tool, newest first (limit/offset pagination)."""

    def get(self, request: Request, name: str) -> Response:
        tool = _tool_or_404(request, name)
        paginator = LimitOffsetPagination()
        page = paginator.paginate_queryset(tool_run_list(user=request.user, tool=tool), request,
                                           view=self)
        return paginator.get_paginated_response([tool_run_data(run) for run in page])


@extend_schema(tags=TAG, responses=dict)
class ToolRunDetailApi(APIView):
    def get(self, request: Request, run_id: str) -> Response:
        run = tool_run_get(user=request.user, run_id=run_id)
        if run is None:
            raise NotFound("No such tool run.", code="not_found")
        return Response(tool_run_data(run))


@extend_schema(tags=TAG, responses=dict)
class ToolSchemaApi(APIView):
    """The tool's JSON Schemas: input, output, and resume (suspending tools)."""

    def get(self, request: Request, name: str) -> Response:
        tool = _tool_or_404(request, name)
        return Response(tool_schema_data(tool))


def tool_schema_data(tool: Tool) -> dict:
    from agents_core.registry import get_tool_definition

    definition = get_tool_definition(tool.name) if tool.source == "code" else None
    return {
        "name": tool.name,
        "description": tool.description,
        "kind": tool.kind,
        "input_schema": tool.input_schema,
        "output_schema": tool.output_schema,
        "resume_schema": getattr(definition, "resume_schema", None),
    }
