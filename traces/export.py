"""OpenTelemetry export: closed spans go out over OTLP (HTTP/protobuf) through the official
SDK's exporter, with the OpenTelemetry GenAI semantic conventions.

It runs in beat's job (`traces.traces_export`), never in a run: the job claims a batch of
closed spans not yet sent (rows locked, skipped by a second worker), sends them and marks
them sent. The exporter reads the standard variables itself (`OTEL_EXPORTER_OTLP_ENDPOINT`
or `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`, `OTEL_EXPORTER_OTLP_HEADERS`, timeouts,
compression); `OTEL_SERVICE_NAME` and `OTEL_RESOURCE_ATTRIBUTES` name the service
(`agent-studio` by default). A span written again after it was sent (a resumed run's own
span, with its new end) is sent again.
"""

from __future__ import annotations

import json
from typing import Any

from django.conf import settings
from django.db import transaction
from django.utils import timezone

from traces.models import Span, SpanKind

# Model parameters as the GenAI conventions name them.
REQUEST_PARAMS = {
    "temperature": "gen_ai.request.temperature",
    "max_tokens": "gen_ai.request.max_tokens",
    "top_p": "gen_ai.request.top_p",
    "seed": "gen_ai.request.seed",
    "frequency_penalty": "gen_ai.request.frequency_penalty",
    "presence_penalty": "gen_ai.request.presence_penalty",
}


def _json(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, default=str)


def _clean(attributes: dict[str, Any]) -> dict[str, Any]:
    """OTLP attribute values are scalars or lists of them; None is left out."""
    out: dict[str, Any] = {}
    for key, value in attributes.items():
        if value is None:
            continue
        if isinstance(value, dict) or (
            isinstance(value, list) and not all(isinstance(v, str | int | float) for v in value)
        ):
            value = _json(value)
        out[key] = value
    return out


def _model_attributes(span: Span, attrs: dict[str, Any]) -> tuple[str, dict[str, Any]]:
    model = attrs.get("model") or span.name
    provider = model.split("/", 1)[0] if "/" in model else ""
    out = {
        "gen_ai.operation.name": "chat",
        "gen_ai.provider.name": provider,
        "gen_ai.request.model": model,
        "gen_ai.response.model": attrs.get("response_model"),
        "gen_ai.usage.input_tokens": attrs.get("input_tokens"),
        "gen_ai.usage.output_tokens": attrs.get("output_tokens"),
        "gen_ai.usage.cache_read.input_tokens": attrs.get("cached_tokens"),
        "gen_ai.response.finish_reasons": [attrs["finish_reason"]]
        if attrs.get("finish_reason")
        else None,
        "gen_ai.input.messages": _json(attrs.get("messages", [])),
        "gen_ai.tool.definitions": _json(attrs.get("tools", [])),
        "studio.cost_usd": attrs.get("cost_usd"),
        "studio.time_to_first_token_ms": attrs.get("time_to_first_token_ms"),
    }
    for key, name in REQUEST_PARAMS.items():
        out[name] = (attrs.get("params") or {}).get(key)
    return f"chat {model}", out


def _tool_attributes(span: Span, attrs: dict[str, Any]) -> tuple[str, dict[str, Any]]:
    return f"execute_tool {span.name}", {
        "gen_ai.operation.name": "execute_tool",
        "gen_ai.tool.name": span.name,
        "gen_ai.tool.type": "function",
        "gen_ai.tool.call.id": attrs.get("call_id"),
        "gen_ai.tool.call.arguments": _json(attrs.get("input")),
        "gen_ai.tool.call.result": _json(attrs.get("output")),
        "studio.tool.mode": attrs.get("mode"),
        "studio.tool.isolation": attrs.get("isolation"),
        "studio.tool.worker": attrs.get("worker"),
        "studio.tool.outcome": attrs.get("outcome"),
    }


def _agent_attributes(span: Span, attrs: dict[str, Any]) -> tuple[str, dict[str, Any]]:
    usage = attrs.get("usage") or {}
    return f"invoke_agent {span.name}", {
        "gen_ai.operation.name": "invoke_agent",
        "gen_ai.agent.name": attrs.get("agent") or span.name,
        "gen_ai.request.model": attrs.get("model"),
        "gen_ai.conversation.id": str(span.run.thread_id),
        "gen_ai.usage.input_tokens": usage.get("prompt_tokens"),
        "gen_ai.usage.output_tokens": usage.get("completion_tokens"),
        "studio.run.outcome": attrs.get("outcome"),
        "studio.run.steps": attrs.get("steps"),
    }


def otel_attributes(span: Span) -> tuple[str, dict[str, Any]]:
    """The span's OpenTelemetry name and attributes."""
    attrs = span.attributes or {}
    if span.kind == SpanKind.MODEL:
        name, out = _model_attributes(span, attrs)
    elif span.kind == SpanKind.TOOL:
        name, out = _tool_attributes(span, attrs)
    elif span.kind in (SpanKind.RUN, SpanKind.SUBAGENT):
        name, out = _agent_attributes(span, attrs)
    else:
        name, out = f"{span.kind} {span.name}", {f"studio.{k}": v for k, v in attrs.items()}
    out["studio.span.kind"] = span.kind
    if span.run_id:
        out["studio.run.id"] = str(span.run_id)
    else:  # a console tool run's span
        out["studio.tool_run.id"] = str(span.tool_run_id)
    if span.error:
        out["error.type"] = "tool_error" if span.kind == SpanKind.TOOL else "run_error"
    return name, _clean(out)


def otel_span(span: Span, resource: Any) -> Any:
    from opentelemetry.sdk.trace import ReadableSpan
    from opentelemetry.trace import SpanContext, TraceFlags
    from opentelemetry.trace import SpanKind as OtelKind
    from opentelemetry.trace.status import Status, StatusCode

    trace_id = span.trace_id.int
    context = SpanContext(trace_id, int(span.span_id, 16), False, TraceFlags(TraceFlags.SAMPLED))
    parent = (
        SpanContext(trace_id, int(span.parent_id, 16), False, TraceFlags(TraceFlags.SAMPLED))
        if span.parent_id
        else None
    )
    name, attributes = otel_attributes(span)
    status = Status(StatusCode.ERROR, span.error) if span.error else Status(StatusCode.OK)
    return ReadableSpan(
        name=name,
        context=context,
        parent=parent,
        resource=resource,
        attributes=attributes,
        kind=OtelKind.CLIENT if span.kind == SpanKind.MODEL else OtelKind.INTERNAL,
        status=status,
        start_time=int(span.start.timestamp() * 1e9),
        end_time=int(span.end.timestamp() * 1e9),
    )


def _exporter() -> Any:
    from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter

    return OTLPSpanExporter()


def traces_export(*, batch: int | None = None) -> int:
    """Send one batch of closed, unsent spans; returns how many went out. A batch the
    collector refuses stays unsent for the next pass."""
    from opentelemetry.sdk.resources import Resource
    from opentelemetry.sdk.trace.export import SpanExportResult

    batch = batch or settings.STUDIO_TRACE_EXPORT_BATCH
    resource = Resource.create()
    if str(resource.attributes.get("service.name", "")).startswith("unknown_service"):
        resource = resource.merge(Resource({"service.name": "agent-studio"}))
    exporter = _exporter()
    try:
        with transaction.atomic():
            spans = list(
                Span.objects.select_for_update(skip_locked=True, of=("self",))
                .select_related("run")
                .filter(exported_at__isnull=True, end__isnull=False)
                .order_by("id")[:batch]
            )
            if not spans:
                return 0
            result = exporter.export([otel_span(span, resource) for span in spans])
            if result != SpanExportResult.SUCCESS:
                return 0
            Span.objects.filter(id__in=[s.id for s in spans]).update(exported_at=timezone.now())
            return len(spans)
    finally:
        exporter.shutdown()
