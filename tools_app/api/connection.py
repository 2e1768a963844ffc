"""A tool's connection to the user's account (authorization code flow):
its status, and disconnecting it. Connecting is a browser redirect (tools_app.auth.views).
A source's connection (an MCP server's own OAuth) is at /api/sources/<id>/connection."""

from __future__ import annotations

from drf_spectacular.utils import extend_schema, inline_serializer
from rest_framework import serializers
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from tools_app.api.tools import tool_or_404
from tools_app.auth.connect import connection_delete, connection_get

CONNECTION = inline_serializer(
    "ToolConnection",
    {
        "connectable": serializers.BooleanField(),
        "connected": serializers.BooleanField(),
        "connected_at": serializers.DateTimeField(required=False),
        "expires_at": serializers.DateTimeField(required=False, allow_null=True),
        "expired": serializers.BooleanField(required=False),
        "refreshable": serializers.BooleanField(required=False),
        "scope": serializers.CharField(required=False),
        "connect_url": serializers.CharField(required=False),
    },
)
DISCONNECTED = inline_serializer(
    "ToolDisconnected",
    {
        "connected": serializers.BooleanField(),
        "revoked": serializers.BooleanField(),
        "detail": serializers.CharField(),
    },
)


@extend_schema(tags=["tools"])
class ToolConnectionApi(APIView):
    """The signed-in user's connection for this tool (never the token itself)."""

    @extend_schema(responses={200: CONNECTION})
    def get(self, request: Request, name: str) -> Response:
        tool = tool_or_404(request, name)
        return Response(connection_get(user=request.user, tool=tool))

    @extend_schema(responses={200: DISCONNECTED})
    def delete(self, request: Request, name: str) -> Response:
        tool = tool_or_404(request, name)
        return Response(connection_delete(user=request.user, tool=tool))
