"""REST endpoints of traces: /api/runs/<id>/trace."""

from __future__ import annotations

from typing import Any

from drf_spectacular.utils import extend_schema
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from traces.selectors import span_data, trace_spans

TAG = ["traces"]


class RunTraceApi(APIView):
    @extend_schema(tags=TAG)
    def get(self, request: Request, run_id: Any) -> Response:
        spans = trace_spans(user=request.user, run_id=run_id)
        return Response({"spans": [span_data(span) for span in spans]})
