"""OTLP export: beat's job sends closed spans through the OpenTelemetry SDK's HTTP/protobuf
exporter to a local receiver on 127.0.0.1 that decodes the real ExportTraceServiceRequest;
the spans carry the GenAI semantic conventions, and each goes out once."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
from channels.db import database_sync_to_async
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
    ExportTraceServiceRequest,
    ExportTraceServiceResponse,
)

from tests.agents_core.runtime.conftest import run_to_end
from traces.tasks import traces_export_task

pytestmark = pytest.mark.django_db(transaction=True)


class Receiver(ThreadingHTTPServer):
    def __init__(self) -> None:
        super().__init__(("127.0.0.1", 0), Handler)
        self.requests: list[tuple[str, str, ExportTraceServiceRequest]] = []


class Handler(BaseHTTPRequestHandler):
    def do_POST(self) -> None:  # noqa: N802 - http.server's name
        body = self.rfile.read(int(self.headers["Content-Length"]))
        request = ExportTraceServiceRequest()
        request.ParseFromString(body)
        self.server.requests.append((self.path, self.headers["Content-Type"], request))
        reply = ExportTraceServiceResponse().SerializeToString()
        self.send_response(200)
        self.send_header("Content-Type", "application/x-protobuf")
        self.send_header("Content-Length", str(len(reply)))
        self.end_headers()
        self.wfile.write(reply)

    def log_message(self, *args) -> None:
        pass


@pytest.fixture
def receiver(monkeypatch) -> Iterator[Receiver]:
    server = Receiver()
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    monkeypatch.setenv(
        "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", f"http://127.0.0.1:{server.server_port}/v1/traces"
    )
    monkeypatch.setenv("OTEL_SERVICE_NAME", "studio-under-test")
    yield server
    server.shutdown()
    server.server_close()


def value(attribute) -> object:
    kind = attribute.value.WhichOneof("value")
    if kind == "array_value":
        return [getattr(v, v.WhichOneof("value")) for v in attribute.value.array_value.values]
    return getattr(attribute.value, kind)


async def test_closed_spans_reach_the_collector_with_genai_attributes(make_thread, owner, receiver):
    thread = await database_sync_to_async(make_thread)("rt-agent")
    run, _ = await run_to_end(thread, 'use rt_echo with {"text": "hi"}', owner)
    sent = await database_sync_to_async(traces_export_task)()
    assert sent == 5  # the run, two model calls, the tool call, its hook
    assert await database_sync_to_async(traces_export_task)() == 0  # each span once
    ((path, content_type, request),) = receiver.requests
    assert (path, content_type) == ("/v1/traces", "application/x-protobuf")
    (resource_spans,) = request.resource_spans
    resource = {a.key: value(a) for a in resource_spans.resource.attributes}
    assert resource["service.name"] == "studio-under-test"
    spans = [span for scope in resource_spans.scope_spans for span in scope.spans]
    by_name = {span.name: span for span in spans}
    assert set(by_name) == {
        "invoke_agent rt-agent",
        "chat studio/scripted",
        "execute_tool rt_echo",
        "hook after_tool_call",
    }
    assert {span.trace_id for span in spans} == {run.pk.bytes}
    root = by_name["invoke_agent rt-agent"]
    assert root.parent_span_id == b""
    attrs = {a.key: value(a) for a in root.attributes}
    assert attrs["gen_ai.operation.name"] == "invoke_agent"
    assert attrs["gen_ai.conversation.id"] == str(thread.pk)
    models = [span for span in spans if span.name == "chat studio/scripted"]
    assert len(models) == 2 and all(m.parent_span_id == root.span_id for m in models)
    first = {a.key: value(a) for a in models[0].attributes}
    assert first["gen_ai.operation.name"] == "chat"
    assert first["gen_ai.request.model"] == "studio/scripted"
    assert first["gen_ai.provider.name"] == "studio"
    assert first["gen_ai.usage.input_tokens"] > 0 and first["gen_ai.usage.output_tokens"] > 0
    assert first["gen_ai.response.finish_reasons"] == ["tool_calls"]
    assert "use rt_echo" in first["gen_ai.input.messages"]
    tool = by_name["execute_tool rt_echo"]
    tool_attrs = {a.key: value(a) for a in tool.attributes}
    assert tool_attrs["gen_ai.tool.name"] == "rt_echo"
    assert tool_attrs["gen_ai.tool.call.arguments"] == '{"text": "hi"}'
    assert by_name["hook after_tool_call"].parent_span_id == tool.span_id
    assert all(span.end_time_unix_nano >= span.start_time_unix_nano > 0 for span in spans)


async def test_a_collector_that_is_down_leaves_the_spans_for_the_next_pass(
    make_thread, owner, monkeypatch
):
    from tests.conftest import free_port

    monkeypatch.setenv(
        "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", f"http://127.0.0.1:{free_port()}/v1/traces"
    )
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_TRACES_TIMEOUT", "2")
    thread = await database_sync_to_async(make_thread)("rt-agent")
    await run_to_end(thread, 'use rt_echo with {"text": "hi"}', owner)
    assert await database_sync_to_async(traces_export_task)() == 0
    from traces.models import Span

    unsent = await database_sync_to_async(Span.objects.filter(exported_at__isnull=True).count)()
    assert unsent == 5
