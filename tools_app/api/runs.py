"""REST endpoints for running tools: execute, run history, run detail, schema."""

from __future__ import annotations

import re
from typing import Any

from asgiref.sync import sync_to_async
from django.http import HttpRequest, HttpResponse
from drf_spectacular.utils import OpenApiParameter, extend_schema, inline_serializer
from rest_framework import serializers, status
from rest_framework.pagination import LimitOffsetPagination
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from common.exceptions import ApplicationError, NotFound
from tools_app.api.tools import tool_or_404
from tools_app.execution import ExecutionContext, tool_definition
from tools_app.models import Tool
from tools_app.services.execute import tool_execute
from tools_app.services.runs import tool_run_data, tool_run_get, tool_run_list, tool_run_waiter

TAG = ["tool runs"]
WATCH = re.compile(r"[A-Za-z0-9_-]{1,64}")

# OpenAPI documentation of the bodies (the views read and write plain JSON).
EXECUTE_REQUEST = inline_serializer(
    "ToolExecuteRequest",
    {
        "input": serializers.JSONField(required=False, help_text="The input value."),
        "input_text": serializers.CharField(
            required=False,
            help_text="The input as JSON text (syntax errors come back with line and column).",
        ),
        "watch": serializers.CharField(
            required=False,
            help_text="A name for this run: while it waits for a sandbox slot, /ws/tool-runs/ "
            "sends tool-run-state events with it.",
        ),
    },
)
TOOL_RUN_FIELDS = {
    "id": serializers.UUIDField(),
    "tool": serializers.CharField(),
    "status": serializers.ChoiceField(["pending", "running", "completed", "failed"]),
    "mode": serializers.ChoiceField(["sync", "async"]),
    "input": serializers.JSONField(),
    "output": serializers.JSONField(),
    "model_output": serializers.JSONField(),
    "error": serializers.CharField(),
    "errors": serializers.ListField(child=serializers.DictField()),
    "logs": serializers.CharField(),
    "isolation": serializers.CharField(allow_null=True),
    "duration_ms": serializers.FloatField(allow_null=True),
    "attempts": serializers.IntegerField(),
    "created_at": serializers.DateTimeField(),
    "started_at": serializers.DateTimeField(allow_null=True),
    "finished_at": serializers.DateTimeField(allow_null=True),
}
TOOL_RUN = inline_serializer("ToolRun", TOOL_RUN_FIELDS)
TOOL_RUN_PAGE = inline_serializer(
    "ToolRunPage",
    {
        "count": serializers.IntegerField(),
        "next": serializers.URLField(allow_null=True),
        "previous": serializers.URLField(allow_null=True),
        "results": inline_serializer("ToolRunItem", TOOL_RUN_FIELDS, many=True),
    },
)


@extend_schema(
    tags=TAG,
    request=EXECUTE_REQUEST,
    responses={200: TOOL_RUN, 202: TOOL_RUN, 400: dict},
    parameters=[OpenApiParameter("mode", str, enum=["sync", "async"])],
)
class ToolExecuteApi(APIView):
    """Run a tool with `{"input": {...}}` or `{"input_text": "..."}`; `?mode=async` answers
    202 with a pending run (the result is pushed on /ws/tool-runs/ and can be polled).
    `watch` (optional, a name the caller picks): while the run waits for a sandbox slot,
    /ws/tool-runs/ says so with that name (tool-run-state)."""

    def post(self, request: Request, name: str) -> Response:
        tool = tool_or_404(request, name)
        mode = request.query_params.get("mode") or tool.execution_mode
        if mode not in ("sync", "async"):
            raise ApplicationError("mode must be 'sync' or 'async'.", code="invalid_mode")
        data = request.data if isinstance(request.data, dict) else {}
        input_text = data.get("input_text")
        if input_text is not None and not isinstance(input_text, str):
            return Response({"input_text": ["Must be a string."]}, status=400)
        if input_text is None and "input" not in data:
            return Response({"input": ["Give input (JSON) or input_text (text)."]}, status=400)
        watch = data.get("watch")
        if watch is not None and not (isinstance(watch, str) and WATCH.fullmatch(watch)):
            return Response({"watch": ["At most 64 letters, digits, - or _."]}, status=400)
        context = ExecutionContext(user=request.user)
        if watch:
            context.on_wait = tool_run_waiter(user_id=request.user.pk, watch=watch)
        run = tool_execute(
            tool=tool,
            input=data.get("input"),
            input_text=input_text,
            user=request.user,
            mode=mode,
            context=context,
        )
        body = tool_run_data(run)
        if getattr(run, "input_rejected", False):
            return Response({"detail": run.error, "code": "invalid_input", **body}, status=400)
        code = status.HTTP_202_ACCEPTED if mode == "async" else status.HTTP_200_OK
        return Response(body, status=code)


def served_async(view_class: type[APIView]) -> Any:
    """An async Django view for a DRF view: the request crosses to a thread once, where
    DRF authenticates it, checks its permissions, negotiates, runs the view and renders
    the answer, which comes back as a plain HttpResponse (Django would otherwise render a
    DRF Response in a second crossing). Under ASGI every middleware runs on the event loop
    (studio/middleware.py), so this is the request's only crossing besides Django's own
    request_started / request_finished signals. `cls` and `initkwargs` let the OpenAPI
    schema document `view_class` as before."""
    view = view_class.as_view()

    def rendered(request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
        response = view(request, *args, **kwargs)
        if not hasattr(response, "render"):
            return response
        response.render()
        plain = HttpResponse(response.content, status=response.status_code)
        for header, value in response.items():
            plain[header] = value
        plain.cookies = response.cookies
        return plain

    async def async_view(request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
        return await sync_to_async(rendered)(request, *args, **kwargs)

    async_view.csrf_exempt = True  # type: ignore[attr-defined]  # as DRF's: it checks itself
    async_view.cls = view_class  # type: ignore[attr-defined]
    async_view.initkwargs = {}  # type: ignore[attr-defined]
    async_view.__doc__ = view_class.__doc__
    return async_view


tool_execute_view = served_async(ToolExecuteApi)


@extend_schema(tags=TAG, responses=TOOL_RUN_PAGE)
class ToolRunListApi(APIView):
    """The caller's runs of a tool, newest first (limit/offset pagination)."""

    def get(self, request: Request, name: str) -> Response:
        tool = tool_or_404(request, name)
        paginator = LimitOffsetPagination()
        page = paginator.paginate_queryset(
            tool_run_list(user=request.user, tool=tool), request, view=self
        )
        return paginator.get_paginated_response([tool_run_data(run) for run in page])


@extend_schema(tags=TAG, responses=TOOL_RUN)
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
        tool = tool_or_404(request, name)
        return Response(tool_schema_data(tool))


def tool_schema_data(tool: Tool) -> dict:
    definition = tool_definition(tool)
    return {
        "name": tool.name,
        "description": tool.description,
        "kind": tool.kind,
        "input_schema": tool.input_schema,
        "output_schema": tool.output_schema,
        "resume_schema": getattr(definition, "resume_schema", None),
    }
