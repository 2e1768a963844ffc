"""REST endpoints for external tool sources, all under /api/sources/.

OpenAPI: preview a spec, import picked operations, diff and apply a re-import.
MCP: register a server, refresh its tool list, pick tools to expose.
A2A: add an agent by its card URL. Secrets (headers, API keys) are write-only.
"""

from __future__ import annotations

from typing import Any

from django.db import transaction
from django.urls import reverse
from drf_spectacular.utils import extend_schema
from rest_framework import serializers, status
from rest_framework.parsers import FormParser, MultiPartParser
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from common.exceptions import ApplicationError, NotFound
from common.parsers import StudioJSONParser
from tools_app.api.connection import CONNECTION, DISCONNECTED
from tools_app.auth.connect import source_connection_delete, source_connection_get
from tools_app.connectors.selectors import connector_document
from tools_app.models import Tool, ToolSource
from tools_app.models_sources import SourceKind
from tools_app.sources import a2a, mcp, openapi, openapi_reimport

TAG = ["sources"]
# A spec comes as JSON text, or as a file upload (multipart) or a form.
SPEC_PARSERS = [StudioJSONParser, MultiPartParser, FormParser]


# --- shapes ------------------------------------------------------------------------------
class SourceOutputSerializer(serializers.ModelSerializer):
    tools = serializers.SerializerMethodField()
    has_credentials = serializers.SerializerMethodField()
    remote_tools = serializers.SerializerMethodField()

    class Meta:
        model = ToolSource
        fields = [
            "id",
            "kind",
            "name",
            "url",
            "config",
            "imported_at",
            "created_at",
            "tools",
            "has_credentials",
            "remote_tools",
        ]

    def get_tools(self, source: ToolSource) -> list[dict[str, Any]]:
        tools = Tool.objects.live().filter(owner=source.owner, config__source_id=source.id)
        return [
            {
                "name": t.name,
                "kind": t.kind,
                "description": t.description,
                "key": t.config.get("operation_key") or t.config.get("remote_name"),
            }
            for t in tools
        ]

    def get_has_credentials(self, source: ToolSource) -> bool:
        return bool(source.credentials_encrypted)

    def get_remote_tools(self, source: ToolSource) -> list[dict[str, Any]] | None:
        if source.kind != SourceKind.MCP:
            return None
        return source.document.get("tools", [])


class SpecInputSerializer(serializers.Serializer):
    text = serializers.CharField(required=False, trim_whitespace=False)
    url = serializers.URLField(required=False, max_length=2000)
    file = serializers.FileField(required=False)
    # Secrets (stored encrypted on each imported tool); the TLS ones (ca_bundle,
    # client_cert, client_key) also fetch a spec given by URL.
    credentials = serializers.DictField(
        child=serializers.CharField(trim_whitespace=False), required=False
    )

    def validate(self, attrs: dict[str, Any]) -> dict[str, Any]:
        given = [k for k in ("text", "url", "file") if attrs.get(k)]
        if len(given) != 1:
            raise serializers.ValidationError(
                {"text": ["Give the spec one way: text (paste), file (upload) or url."]}
            )
        if attrs.get("file"):
            attrs["text"] = attrs.pop("file").read(openapi.MAX_SPEC_BYTES + 1)
        return attrs


class PickSerializer(serializers.Serializer):
    key = serializers.CharField()
    name = serializers.CharField(required=False, allow_blank=True, max_length=64)


class ImportInputSerializer(SpecInputSerializer):
    picks = PickSerializer(many=True)
    base_url = serializers.URLField(required=False, allow_blank=True)


class ReimportInputSerializer(SpecInputSerializer):
    add = PickSerializer(many=True, required=False)

    def validate(self, attrs: dict[str, Any]) -> dict[str, Any]:
        if not any(attrs.get(k) for k in ("text", "url", "file")):
            return attrs  # re-fetch from the source's own URL
        return super().validate(attrs)


class McpClientSerializer(serializers.Serializer):
    """The OAuth client registered for this studio at a server without Dynamic Client
    Registration (stored encrypted on the source)."""

    client_id = serializers.CharField(max_length=500)
    client_secret = serializers.CharField(
        required=False, allow_blank=True, max_length=2000, trim_whitespace=False
    )


class McpRegisterSerializer(serializers.Serializer):
    url = serializers.URLField(max_length=2000)
    transport = serializers.ChoiceField(choices=mcp.TRANSPORTS, default="streamable_http")
    headers = serializers.DictField(child=serializers.CharField(), required=False)
    name = serializers.CharField(required=False, allow_blank=True, max_length=200)
    oauth = McpClientSerializer(required=False)


class McpPickSerializer(serializers.Serializer):
    remote_name = serializers.CharField()
    name = serializers.CharField(required=False, allow_blank=True, max_length=64)


class A2AAddSerializer(serializers.Serializer):
    card_url = serializers.URLField(max_length=2000)
    name = serializers.CharField(required=False, allow_blank=True, max_length=64)
    headers = serializers.DictField(child=serializers.CharField(), required=False)
    timeout_seconds = serializers.FloatField(required=False, min_value=1, max_value=600)


def _valid(serializer_class: type[serializers.Serializer], request: Request, **kw) -> dict:
    serializer = serializer_class(data=request.data, **kw)
    serializer.is_valid(raise_exception=True)
    return serializer.validated_data


def _source(request: Request, source_id: int, kind: str | None = None) -> ToolSource:
    source = ToolSource.objects.filter(pk=source_id, owner=request.user).first()
    if source is None or (kind and source.kind != kind):
        raise NotFound(f"No {kind or ''} source {source_id}.".replace("  ", " "), code="not_found")
    return source


def _callback(request: Request) -> str:
    """The studio's OAuth redirect URI, for a client registered at an MCP server."""
    return request.build_absolute_uri(reverse("oauth-callback"))


def _spec_args(data: dict[str, Any]) -> dict[str, Any]:
    return {"text": data.get("text"), "url": data.get("url")}


def _new_spec_args(source: ToolSource, data: dict[str, Any]) -> dict[str, Any]:
    """A re-import's new spec: the one given, else a connector's shipped spec, else the
    source's own URL fetched again."""
    args = _spec_args(data)
    if not args["text"] and not args["url"]:
        args["document"] = connector_document(source)
    return args


# --- views -------------------------------------------------------------------------------
@extend_schema(tags=TAG)
class SourceListApi(APIView):
    @extend_schema(responses=SourceOutputSerializer(many=True))
    def get(self, request: Request) -> Response:
        sources = ToolSource.objects.filter(owner=request.user)
        if kind := request.query_params.get("kind"):
            sources = sources.filter(kind=kind)
        return Response(SourceOutputSerializer(sources, many=True).data)


@extend_schema(tags=TAG)
class SourceDetailApi(APIView):
    @extend_schema(responses=SourceOutputSerializer)
    def get(self, request: Request, source_id: int) -> Response:
        return Response(SourceOutputSerializer(_source(request, source_id)).data)

    @extend_schema(responses={204: None})
    def delete(self, request: Request, source_id: int) -> Response:
        source = _source(request, source_id)
        with transaction.atomic():
            Tool.objects.filter(
                owner=request.user, config__source_id=source.id, kind=source.kind
            ).delete()
            source.delete()
        return Response(status=status.HTTP_204_NO_CONTENT)


@extend_schema(tags=TAG)
class OpenApiPreviewApi(APIView):
    parser_classes = SPEC_PARSERS
    long_string_fields = ("text",)  # the spec as text: as long as the body allows

    @extend_schema(request=SpecInputSerializer)
    def post(self, request: Request) -> Response:
        data = _valid(SpecInputSerializer, request)
        preview = openapi.openapi_preview(
            owner=request.user, credentials=data.get("credentials"), **_spec_args(data)
        )
        preview.pop("document")
        return Response(preview)


@extend_schema(tags=TAG)
class OpenApiImportApi(APIView):
    parser_classes = SPEC_PARSERS
    long_string_fields = ("text",)  # the spec as text: as long as the body allows

    @extend_schema(request=ImportInputSerializer, responses={201: SourceOutputSerializer})
    def post(self, request: Request) -> Response:
        data = _valid(ImportInputSerializer, request)
        source = openapi.openapi_import(
            user=request.user,
            picks=data["picks"],
            credentials=data.get("credentials"),
            base_url=data.get("base_url") or None,
            **_spec_args(data),
        )
        return Response(SourceOutputSerializer(source).data, status=status.HTTP_201_CREATED)


@extend_schema(tags=TAG)
class OpenApiDiffApi(APIView):
    parser_classes = SPEC_PARSERS
    long_string_fields = ("text",)  # the spec as text: as long as the body allows

    @extend_schema(request=ReimportInputSerializer)
    def post(self, request: Request, source_id: int) -> Response:
        source = _source(request, source_id, SourceKind.OPENAPI)
        data = _valid(ReimportInputSerializer, request)
        diff = openapi_reimport.openapi_diff(source=source, **_new_spec_args(source, data))
        diff.pop("document")
        return Response(diff)


@extend_schema(tags=TAG)
class OpenApiReimportApi(APIView):
    parser_classes = SPEC_PARSERS
    long_string_fields = ("text",)  # the spec as text: as long as the body allows

    @extend_schema(request=ReimportInputSerializer)
    def post(self, request: Request, source_id: int) -> Response:
        source = _source(request, source_id, SourceKind.OPENAPI)
        data = _valid(ReimportInputSerializer, request)
        result = openapi_reimport.openapi_reimport(
            source=source, add=data.get("add"), **_new_spec_args(source, data)
        )
        return Response(result)


@extend_schema(tags=TAG)
class McpRegisterApi(APIView):
    @extend_schema(request=McpRegisterSerializer, responses={201: SourceOutputSerializer})
    def post(self, request: Request) -> Response:
        source = mcp.mcp_server_register(
            user=request.user,
            redirect_uri=_callback(request),
            **_valid(McpRegisterSerializer, request),
        )
        return Response(SourceOutputSerializer(source).data, status=status.HTTP_201_CREATED)


@extend_schema(tags=TAG)
class McpRefreshApi(APIView):
    @extend_schema(request=None)
    def post(self, request: Request, source_id: int) -> Response:
        source = _source(request, source_id, SourceKind.MCP)
        changes = mcp.mcp_server_refresh(
            source=source, user=request.user, redirect_uri=_callback(request)
        )
        source.refresh_from_db()
        return Response({"changes": changes, "source": SourceOutputSerializer(source).data})


@extend_schema(tags=TAG)
class McpPickApi(APIView):
    @extend_schema(request=McpPickSerializer(many=True))
    def post(self, request: Request, source_id: int) -> Response:
        source = _source(request, source_id, SourceKind.MCP)
        picks = request.data.get("picks") if isinstance(request.data, dict) else None
        if not isinstance(picks, list) or not picks:
            raise ApplicationError(
                "Pick at least one tool.",
                code="no_tools",
                extra={"errors": [{"path": "$.picks", "message": "empty"}]},
            )
        serializer = McpPickSerializer(data=picks, many=True)
        serializer.is_valid(raise_exception=True)
        tools = mcp.mcp_tools_pick(source=source, picks=serializer.validated_data)
        return Response({"tools": [t.name for t in tools]}, status=status.HTTP_201_CREATED)


@extend_schema(tags=TAG)
class A2AAddApi(APIView):
    @extend_schema(request=A2AAddSerializer)
    def post(self, request: Request) -> Response:
        tool = a2a.a2a_agent_add(user=request.user, **_valid(A2AAddSerializer, request))
        source = ToolSource.objects.get(pk=tool.config["source_id"])
        return Response(
            {"tool": tool.name, "source": SourceOutputSerializer(source).data},
            status=status.HTTP_201_CREATED,
        )


@extend_schema(tags=TAG)
class SourceConnectionApi(APIView):
    """The signed-in user's connection at a source that signs in with the server's own
    OAuth (an MCP server; never the token itself): one connection serves every tool of
    the source. Connecting is the browser's /oauth/sources/<id>/connect."""

    @extend_schema(responses={200: CONNECTION})
    def get(self, request: Request, source_id: int) -> Response:
        source = _source(request, source_id)
        return Response(source_connection_get(user=request.user, source=source))

    @extend_schema(responses={200: DISCONNECTED})
    def delete(self, request: Request, source_id: int) -> Response:
        source = _source(request, source_id)
        return Response(source_connection_delete(user=request.user, source=source))
