"""REST endpoints that copy agents (export, import, duplicate, the starting points) and
preview what the model receives from instructions.

GET /api/agents/<slug>/export?format=json|python, POST /api/agents/import,
GET /api/agents/import-jobs/<id>/,
POST /api/agents/<slug>/duplicate, GET /api/agent-templates/,
POST /api/agents/<slug>/instructions-preview.
"""

from __future__ import annotations

from typing import Any

from django.http import HttpResponse
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import serializers, status
from rest_framework.negotiation import DefaultContentNegotiation
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.reverse import reverse
from rest_framework.views import APIView

from agents_core.api.agents import agent_or_404
from agents_core.models import ImportJob
from agents_core.runtime.storage.messages import instruction_messages
from agents_core.selectors import import_job_get
from agents_core.serializers import AgentInputSerializer, AgentOutputSerializer
from agents_core.services.agent_code import agent_python
from agents_core.services.agent_io import agent_document, agent_duplicate, agent_import
from agents_core.services.import_jobs import import_job_create, import_runs_async
from agents_core.starters import STARTERS
from common.exceptions import ApplicationError, NotFound

TAG = ["agents"]


class _FormatIsOurs(DefaultContentNegotiation):
    """`?format=` picks the export's format here, not DRF's renderer: always JSON."""

    def select_renderer(self, request: Any, renderers: Any, format_suffix: Any = None) -> Any:
        return renderers[0], renderers[0].media_type


class ImportInputSerializer(serializers.Serializer):
    document = serializers.JSONField(help_text="An export document (GET .../export).")
    renames = serializers.JSONField(
        required=False,
        default=dict,
        help_text='New names for what clashes: {"agents": {old: new}, "tools": {old: new}}.',
    )
    dry_run = serializers.BooleanField(
        required=False, default=False, help_text="Check and say what would be created."
    )


class DuplicateInputSerializer(serializers.Serializer):
    slug = serializers.CharField(max_length=100, help_text="The copy's id.")
    name = serializers.CharField(max_length=200)

    def validate_slug(self, value: str) -> str:
        return AgentInputSerializer().validate_slug(value)


@extend_schema(tags=TAG)
class AgentExportApi(APIView):
    content_negotiation_class = _FormatIsOurs

    @extend_schema(
        parameters=[OpenApiParameter("format", str, enum=["json", "python"])],
        responses={200: dict},
        description="The agent with its studio tools and studio sub-agents as a JSON "
        "document (import it with POST /api/agents/import), or as a Python module using "
        "the code-first API. Credentials are never exported.",
    )
    def get(self, request: Request, slug: str) -> Response | HttpResponse:
        document = agent_document(agent=agent_or_404(request, slug), owner=request.user)
        kind = request.query_params.get("format", "json")
        if kind == "json":
            return Response(document)
        if kind != "python":
            raise ApplicationError(
                f"Unknown format {kind!r}: use json or python.", code="invalid_format"
            )
        response = HttpResponse(agent_python(document), content_type="text/x-python")
        response["Content-Disposition"] = f'attachment; filename="{slug.replace("-", "_")}.py"'
        return response


class ImportJobOutputSerializer(serializers.ModelSerializer):
    url = serializers.SerializerMethodField()

    class Meta:
        model = ImportJob
        fields = [
            "id",
            "url",
            "status",
            "done",
            "total",
            "result",
            "error",
            "error_status",
            "created_at",
            "finished_at",
        ]

    def get_url(self, job: ImportJob) -> str:
        return reverse("agent-import-job", kwargs={"job_id": job.id})


@extend_schema(tags=TAG)
class AgentImportApi(APIView):
    @extend_schema(
        request=ImportInputSerializer,
        responses={200: dict, 201: dict, 202: ImportJobOutputSerializer},
        description="Create the document's agents and studio tools, all or nothing. "
        "`dry_run` answers 200 with what would be created; a taken slug or tool name is a "
        "409 with `clashes` (and a free name for each): send `renames` to use new names. "
        "A document of STUDIO_IMPORT_ASYNC_ITEMS agents and tools or more (500 by default) "
        "is imported by a worker: 202 with the job (`url`, `status`, `done` / `total`); the "
        "job's `result` is then what this endpoint answers for a small import, its `error` "
        "and `error_status` the body and status it would have refused one with.",
    )
    def post(self, request: Request) -> Response:
        serializer = ImportInputSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        data = serializer.validated_data
        if import_runs_async(document=data["document"]):
            job = import_job_create(owner=request.user, **data)
            body = ImportJobOutputSerializer(job).data
            return Response(
                body, status=status.HTTP_202_ACCEPTED, headers={"Location": body["url"]}
            )
        plan = agent_import(owner=request.user, **data)
        return Response(
            plan, status=status.HTTP_200_OK if data["dry_run"] else status.HTTP_201_CREATED
        )


@extend_schema(tags=TAG)
class ImportJobDetailApi(APIView):
    @extend_schema(responses=ImportJobOutputSerializer)
    def get(self, request: Request, job_id: str) -> Response:
        """An import job of yours: its progress, then its result or error (others: 404)."""
        job = import_job_get(user=request.user, job_id=job_id)
        if job is None:
            raise NotFound("No such import job.", code="not_found")
        return Response(ImportJobOutputSerializer(job).data)


@extend_schema(tags=TAG)
class AgentDuplicateApi(APIView):
    @extend_schema(request=DuplicateInputSerializer, responses={201: AgentOutputSerializer})
    def post(self, request: Request, slug: str) -> Response:
        agent = agent_or_404(request, slug)
        serializer = DuplicateInputSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        copy = agent_duplicate(agent=agent, owner=request.user, **serializer.validated_data)
        return Response(AgentOutputSerializer(copy).data, status=status.HTTP_201_CREATED)


@extend_schema(tags=TAG)
class AgentTemplateListApi(APIView):
    @extend_schema(responses={200: dict})
    def get(self, request: Request) -> Response:
        """Starting points for a new agent, each an export document to import."""
        return Response(STARTERS)


class InstructionsPreviewInputSerializer(serializers.Serializer):
    instructions = serializers.JSONField(
        help_text="Any of the four forms: a string, a list of strings, a system message "
        "{role, content, providerOptions} or a list of them."
    )

    def validate_instructions(self, value: Any) -> Any:
        return AgentInputSerializer().validate_instructions(value)


@extend_schema(tags=TAG)
class InstructionsPreviewApi(APIView):
    @extend_schema(request=InstructionsPreviewInputSerializer, responses={200: dict})
    def post(self, request: Request, slug: str) -> Response:
        """The system messages a model call gets from these instructions, exactly as the
        run builds them for the agent's model (nothing is saved)."""
        agent = agent_or_404(request, slug)
        serializer = InstructionsPreviewInputSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        messages = instruction_messages(serializer.validated_data["instructions"], agent.model)
        return Response({"messages": messages})
