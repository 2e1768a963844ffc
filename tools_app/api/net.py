"""The address guard's verdict on a URL, for the forms (before saving) and the tool page:
/api/url-check and /api/tools/<name>/network. Nothing is requested; a name is resolved."""

from __future__ import annotations

from drf_spectacular.utils import extend_schema
from rest_framework import serializers
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from tools_app.api.tools import tool_or_404
from tools_app.net import url_verdict
from tools_app.net.check import ALLOWED, REFUSED, UNKNOWN
from tools_app.selectors import tool_outbound_urls

TAG = ["tools"]


class _TextField(serializers.CharField):
    """A string, and only a string (CharField would turn 12 into "12")."""

    def to_internal_value(self, data: object) -> str:
        if not isinstance(data, str):
            self.fail("invalid")
        return super().to_internal_value(data)


class UrlCheckInputSerializer(serializers.Serializer):
    url = _TextField(max_length=2000, trim_whitespace=False)


class UrlVerdictSerializer(serializers.Serializer):
    url = serializers.CharField()
    status = serializers.ChoiceField(choices=[ALLOWED, REFUSED, UNKNOWN])
    message = serializers.CharField(help_text="What the page shows.")
    reason = serializers.CharField(help_text="Why it is refused, or why it cannot be judged.")
    private_network = serializers.CharField(
        allow_null=True, help_text="The operator's allow-list entry that lets it through."
    )


class ToolNetworkSerializer(serializers.Serializer):
    urls = UrlVerdictSerializer(many=True)


@extend_schema(tags=TAG)
class UrlCheckApi(APIView):
    """How every request to this URL would be judged now (name rules, then addresses)."""

    @extend_schema(request=UrlCheckInputSerializer, responses=UrlVerdictSerializer)
    def post(self, request: Request) -> Response:
        serializer = UrlCheckInputSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        return Response(url_verdict(serializer.validated_data["url"]).as_dict())


@extend_schema(tags=TAG)
class ToolNetworkApi(APIView):
    """The verdict on each URL the tool sends requests to."""

    @extend_schema(responses=ToolNetworkSerializer)
    def get(self, request: Request, name: str) -> Response:
        urls = tool_outbound_urls(tool=tool_or_404(request, name))
        return Response({"urls": [url_verdict(url).as_dict() for url in urls]})
