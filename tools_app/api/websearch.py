"""The user's web search setting (Settings → Web search): /api/settings/web-search/
(GET, PUT, DELETE) and .../test, one search with it. The API key is write-only: reads
give `key_set` and a hint."""

from __future__ import annotations

from typing import Any

from asgiref.sync import async_to_sync
from drf_spectacular.utils import extend_schema
from rest_framework import status
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from common.exceptions import ApplicationError
from tools_app.execution import ExecutionContext
from tools_app.websearch import web_search
from tools_app.websearch.settings import (
    invalid,
    web_search_delete,
    web_search_save,
    web_search_view,
)

TAG = ["tools"]
FIELDS = {"provider", "base_url", "api_key", "model"}


def _body(request: Request) -> dict[str, Any]:
    if not isinstance(request.data, dict):
        raise invalid("$", "the body must be a JSON object")
    unknown = sorted(set(request.data) - FIELDS)
    if unknown:
        raise invalid(f"$.{unknown[0]}", "unknown field")
    return dict(request.data)


@extend_schema(tags=TAG)
class WebSearchSettingApi(APIView):
    @extend_schema(responses=dict)
    def get(self, request: Request) -> Response:
        return Response(web_search_view(user=request.user))

    @extend_schema(request=dict, responses=dict)
    def put(self, request: Request) -> Response:
        web_search_save(owner=request.user, data=_body(request))
        return Response(web_search_view(user=request.user))

    @extend_schema(responses={204: None})
    def delete(self, request: Request) -> Response:
        web_search_delete(owner=request.user)
        return Response(status=status.HTTP_204_NO_CONTENT)


@extend_schema(tags=TAG)
class WebSearchTestApi(APIView):
    """One search with the user's setting (or the server's), as web_search runs it."""

    @extend_schema(request=dict, responses=dict)
    def post(self, request: Request) -> Response:
        from tools_app.errors import ToolError

        data = request.data if isinstance(request.data, dict) else {}
        query = data.get("query")
        if not isinstance(query, str) or not query.strip() or len(query) > 400:
            raise invalid("$.query", "a search query of 1 to 400 characters")
        try:
            output = async_to_sync(web_search)(
                {"query": query, "count": 3}, ExecutionContext(user=request.user)
            )
        except ToolError as exc:
            raise ApplicationError(exc.message, code="search_failed", status_code=502) from None
        return Response(output)
