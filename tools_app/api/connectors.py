"""REST endpoints of the connector catalogue, under /api/connectors/: list the
connectors, show one with its operations, and connect one (make the user's tools)."""

from __future__ import annotations

from drf_spectacular.utils import OpenApiTypes, extend_schema
from rest_framework import status
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from tools_app.api.sources import SourceOutputSerializer
from tools_app.connectors.catalogue import catalogue
from tools_app.connectors.selectors import connector_detail, connector_get, connector_summary
from tools_app.connectors.services import connector_add

TAG = ["connectors"]


@extend_schema(tags=TAG)
class ConnectorListApi(APIView):
    @extend_schema(responses=OpenApiTypes.OBJECT)
    def get(self, request: Request) -> Response:
        return Response([connector_summary(c) for c in catalogue().values()])


@extend_schema(tags=TAG)
class ConnectorDetailApi(APIView):
    @extend_schema(responses=OpenApiTypes.OBJECT)
    def get(self, request: Request, slug: str) -> Response:
        return Response(connector_detail(connector_get(slug), user=request.user))


@extend_schema(tags=TAG)
class ConnectorAddApi(APIView):
    @extend_schema(request=OpenApiTypes.OBJECT, responses={201: SourceOutputSerializer})
    def post(self, request: Request, slug: str) -> Response:
        source = connector_add(user=request.user, slug=slug, data=request.data)
        return Response(SourceOutputSerializer(source).data, status=status.HTTP_201_CREATED)
