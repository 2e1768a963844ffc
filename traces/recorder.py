"""The run observer that records spans as a run goes (agents_core/runtime/run/observers.py).

Spans open and close at the run's boundaries and live in memory per run; they are handed
to the process's span writer (traces/writer.py), which stores what many runs handed over
in one statement, as inserts that update the open spans already stored: at the run's
end, suspension and async tool calls (the run waits for them to be stored), and at step
boundaries at most every STEP_FLUSH_SECONDS (written behind the run). Nothing is recorded
per streamed delta: time to first token is a timestamp on the model span.

Ids: the trace is the root run's id; a span's id is 16 hex digits, derived from the run
and the call where another process must find the span again (the run's own span, an
async tool call a Celery worker finishes, a suspension a resumed run closes), random
otherwise: 64 bits of `random` (as OpenTelemetry's id generator), not of `os.urandom`,
whose system call lets go of the GIL, so that the event loop opening a model call's span
waits to take it back from whatever thread is busy (a hundred runs starting together).
A span id names a span; it is no secret (who may read a trace is the run's owner).
"""

from __future__ import annotations

import hashlib
import json
import random
import time
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from typing import Any

from tools_app.redaction import secrets_current
from traces.models import Span, SpanKind
from traces.writer import Batch, spans_write_many, writer_for

# A running run's spans are stored at a step boundary at most this often (and always at
# its end, its suspension, and before an async tool call is handed to a worker).
STEP_FLUSH_SECONDS = 1.0
# litellm arguments that are not a model parameter worth showing, or a secret.
NOT_PARAMS = {"messages", "tools", "tool_choice", "stream", "api_key", "model", "extra_headers"}


def span_id_for(*parts: str) -> str:
    return hashlib.sha256("/".join(parts).encode()).hexdigest()[:16]


def _snapshot(value: Any) -> Any:
    """A JSON copy: what was sent, as it was when it was sent."""
    return json.loads(json.dumps(value, default=str))


@dataclass
class OpenSpan:
    span_id: str
    kind: str
    name: str
    parent_id: str
    start: float
    end: float | None = None
    status: str = "ok"
    error: str = ""
    attributes: dict[str, Any] = field(default_factory=dict)


@dataclass
class RunTrace:
    run_id: str
    trace_id: str
    root: OpenSpan
    dirty: dict[str, OpenSpan] = field(default_factory=dict)
    closes: list[tuple[str, float]] = field(default_factory=list)
    model: OpenSpan | None = None
    tools: dict[str, OpenSpan] = field(default_factory=dict)
    done: bool = False
    # When the run's spans were last handed to the writer (its start, at first).
    handed: float = field(default_factory=time.monotonic)

    def open(self, kind: str, name: str, parent: OpenSpan | None = None, **attrs: Any) -> OpenSpan:
        span = OpenSpan(
            span_id=attrs.pop("span_id", None) or f"{random.getrandbits(64):016x}",
            kind=kind,
            name=name,
            parent_id=(parent or self.root).span_id,
            start=time.time(),
            attributes=attrs,
        )
        self.dirty[span.span_id] = span
        return span

    def close(self, span: OpenSpan, *, error: str = "", status: str = "", **attrs: Any) -> None:
        span.end = time.time()
        span.attributes.update(attrs)
        if error:
            span.status, span.error = "error", error
        elif status:
            span.status = status
        self.dirty[span.span_id] = span


class Recorder:
    """One per process; the runs of the process each have a RunTrace while they execute."""

    def __init__(self) -> None:
        self.runs: dict[str, RunTrace] = {}
        # child run id -> (trace id, the parent's tool span), set when a sub-agent starts.
        self.children: dict[str, tuple[str, str]] = {}

    # --- the run -----------------------------------------------------------------------
    def run_started(self, run_id: str, *, agent: str, model: str, resumed: bool, step: int) -> None:
        trace_id, parent_id = self.children.pop(run_id, (run_id, ""))
        kind = SpanKind.SUBAGENT if parent_id else SpanKind.RUN
        root = OpenSpan(
            span_id=span_id_for(run_id, "run"),
            kind=kind,
            name=agent,
            parent_id=parent_id,
            start=time.time(),
            attributes={"agent": agent, "model": model},
        )
        trace = RunTrace(run_id=run_id, trace_id=trace_id, root=root)
        trace.dirty[root.span_id] = root
        if resumed:
            root.attributes["resumed"] = True
        self.runs[run_id] = trace

    def run_finished(
        self, run_id: str, *, status: str, usage: dict, steps: int, error: str = ""
    ) -> None:
        trace = self.runs.get(run_id)
        if trace is None:
            return
        if trace.model is not None:
            trace.close(trace.model, error=error or "the run ended during this call")
            trace.model = None
        for span in trace.tools.values():
            trace.close(span, error=error or f"the run ended as {status}")
        trace.tools.clear()
        trace.close(
            trace.root, error=error, status=status, usage=dict(usage), steps=steps, outcome=status
        )
        trace.done = True

    def child_run_started(self, run_id: str, *, child_run_id: str, call_id: str) -> None:
        trace = self.runs.get(run_id)
        if trace is None:
            return
        tool = trace.tools.get(call_id)
        self.children[child_run_id] = (trace.trace_id, (tool or trace.root).span_id)

    # --- model calls -------------------------------------------------------------------
    def model_call_started(self, run_id: str, *, step: int, request: dict[str, Any]) -> None:
        trace = self.runs.get(run_id)
        if trace is None:
            return
        if trace.model is not None:  # the model before this one failed: a fallback
            trace.close(trace.model, error="this model failed; the next one was tried")
        params = {k: v for k, v in request.items() if k not in NOT_PARAMS}
        trace.model = trace.open(
            SpanKind.MODEL,
            str(request.get("model", "")),
            step=step,
            model=request.get("model"),
            messages=_snapshot(request.get("messages", [])),
            tools=_snapshot(request.get("tools") or []),
            tool_choice=request.get("tool_choice"),
            params=_snapshot(params),
        )

    def model_call_finished(
        self,
        run_id: str,
        *,
        usage: Any,
        finish_reason: str,
        first_token_at: float | None,
        response_model: str | None,
    ) -> None:
        trace = self.runs.get(run_id)
        if trace is None or trace.model is None:
            return
        span, trace.model = trace.model, None
        tokens = usage_tokens(usage)
        ttft = None if first_token_at is None else round((first_token_at - span.start) * 1000, 1)
        trace.close(
            span,
            finish_reason=finish_reason,
            response_model=response_model,
            time_to_first_token_ms=ttft,
            cost_pending=True,
            **tokens,
        )

    # --- tool calls, hooks, suspensions, signals ---------------------------------------
    def tool_call_started(
        self, run_id: str, *, call_id: str, name: str, input: Any, kind: str, mode: str,
        resumed: bool,
    ) -> None:  # fmt: skip
        trace = self.runs.get(run_id)
        if trace is None:
            return
        trace.tools[call_id] = trace.open(
            SpanKind.TOOL,
            name,
            span_id=None if resumed else span_id_for(run_id, call_id, "tool"),
            call_id=call_id,
            input=_snapshot(input),
            tool_kind=kind,
            mode=mode,
            resumed=resumed,
        )

    def tool_executed(
        self, run_id: str, *, call_id: str, isolation: str | None, duration_ms: float | None
    ) -> None:
        span = self._tool(run_id, call_id)
        if span is not None:
            span.attributes.update(isolation=isolation, tool_duration_ms=duration_ms)

    def tool_call_finished(
        self, run_id: str, *, call_id: str, status: str, output: Any = None,
        model_output: Any = None, error: str = "",
    ) -> None:  # fmt: skip
        trace = self.runs.get(run_id)
        span = trace.tools.pop(call_id, None) if trace is not None else None
        if span is None:
            return
        attrs: dict[str, Any] = {"outcome": status, "output": _snapshot(output)}
        if model_output is not None:
            attrs["model_output"] = _snapshot(model_output)
        trace.close(span, error=error, **attrs)

    def tool_call_pending(self, run_id: str, *, call_id: str) -> None:
        trace = self.runs.get(run_id)
        span = trace.tools.pop(call_id, None) if trace is not None else None
        if span is not None:
            span.attributes["outcome"] = "pending"
            trace.dirty[span.span_id] = span  # stays open until the worker finishes it

    def hook_decision(self, run_id: str, *, call_id: str, record: dict[str, Any]) -> None:
        trace = self.runs.get(run_id)
        if trace is None:
            return
        span = trace.open(
            SpanKind.HOOK, record.get("hook", "hook"), trace.tools.get(call_id), **_snapshot(record)
        )
        trace.close(span)

    def suspended(self, run_id: str, *, call_id: str, name: str, kind: str) -> None:
        trace = self.runs.get(run_id)
        if trace is None:
            return
        tool = trace.tools.pop(call_id, None)
        if tool is not None:
            trace.close(tool, status="suspended", outcome="suspended")
        trace.open(
            SpanKind.SUSPENSION,
            kind,
            span_id=span_id_for(run_id, call_id, "suspension"),
            call_id=call_id,
            tool=name,
        )
        trace.close(trace.root, status="suspended", outcome="suspended")
        trace.done = True

    def resumed(self, run_id: str, *, call_id: str) -> None:
        trace = self.runs.get(run_id)
        if trace is not None:
            trace.closes.append((span_id_for(run_id, call_id, "suspension"), time.time()))

    def signals_drained(self, run_id: str, *, signals: list[str]) -> None:
        trace = self.runs.get(run_id)
        if trace is None:
            return
        span = trace.open(SpanKind.SIGNAL, "signals", count=len(signals), signals=list(signals))
        trace.close(span)

    def _tool(self, run_id: str, call_id: str) -> OpenSpan | None:
        trace = self.runs.get(run_id)
        return trace.tools.get(call_id) if trace is not None else None

    # --- writing -----------------------------------------------------------------------
    async def flush(self, run_id: str, *, wait: bool = True) -> None:
        """Hand the run's new and changed spans to the process's span writer (writer.py);
        with `wait`, return once they are stored. Without it (a step boundary) only every
        STEP_FLUSH_SECONDS: a short run's spans are written once, at its end, and a long
        run's trace fills in as it goes."""
        trace = self.runs.get(run_id)
        if trace is None or (not wait and time.monotonic() - trace.handed < STEP_FLUSH_SECONDS):
            return
        trace.handed = time.monotonic()
        # Copies: the run goes on changing its open spans while the writer stores these.
        spans = [replace(span, attributes=dict(span.attributes)) for span in trace.dirty.values()]
        trace.dirty = {}
        closes, trace.closes = trace.closes, []
        if trace.done:
            self.runs.pop(run_id, None)
        if spans or closes:
            batch = Batch(
                run_id=run_id,
                trace_id=trace.trace_id,
                spans=spans,
                closes=closes,
                secrets=secrets_current(),
            )
            done = writer_for(spans_write_many).put(batch, wait=wait)
            if done is not None:
                await done

    def async_tool_finished(self, run_id: str, **fields: Any) -> None:
        """A Celery worker finished an async call: its span, stored open, closes now."""
        async_span_close(run_id=run_id, **fields)


def usage_tokens(usage: Any) -> dict[str, Any]:
    if usage is None:
        return {}
    details = getattr(usage, "prompt_tokens_details", None)
    return {
        "input_tokens": getattr(usage, "prompt_tokens", None),
        "output_tokens": getattr(usage, "completion_tokens", None),
        "cached_tokens": getattr(details, "cached_tokens", None) if details else None,
    }


def async_span_close(
    *, run_id: str, call_id: str, status: str, output: Any, error: str,
    duration_ms: float | None, worker: str, isolation: str | None, attempts: int,
) -> None:  # fmt: skip
    span = Span.objects.filter(span_id=span_id_for(run_id, call_id, "tool")).first()
    if span is None:
        return
    span.end = datetime.now(tz=UTC)
    span.attributes.update(
        outcome=status,
        output=_snapshot(output),
        tool_duration_ms=duration_ms,
        worker=worker,
        isolation=isolation,
        attempts=attempts,
    )
    if error:
        span.status, span.error = "error", error
    span.save(update_fields=["end", "attributes", "status", "error"])


recorder = Recorder()
