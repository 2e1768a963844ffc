"""The trace of a tool run from the test console (or REST, or the CLI): one `tool` span,
written in one INSERT when the run ends. tools_app tells its observer seam
(tools_app/observers.py) and this module listens (traces/apps.py)."""

from __future__ import annotations

import contextlib
import json
from typing import Any

from django.db import IntegrityError

from traces.models import Span, SpanKind
from traces.recorder import span_id_for


class ConsoleRecorder:
    def tool_run_finished(self, **facts: Any) -> None:
        # One INSERT, outside any transaction of its own. A run is finished once; should a
        # notice come twice, the span stays as it was first written.
        with contextlib.suppress(IntegrityError):
            self.tool_run_rows(**facts)[0].save(force_insert=True)

    def tool_run_rows(
        self, *, run_id: str, name: str, status: str, error: str, start: Any, end: Any,
        **facts: Any,
    ) -> list[Span]:  # fmt: skip
        """The run's span, unsaved."""
        # A JSON copy of the facts (a date or a Decimal in a tool's output becomes text).
        attributes = json.loads(json.dumps(facts, default=str))
        attributes["outcome"] = status
        attributes["tool_duration_ms"] = attributes.pop("duration_ms", None)
        span = Span(
            span_id=span_id_for(run_id, "console", "tool"),
            trace_id=run_id,
            tool_run_id=run_id,
            kind=SpanKind.TOOL,
            name=name[:200],
            start=start,
            end=end,
            status="error" if status == "failed" else "ok",
            error=error or "",
            attributes=attributes,
        )
        return [span]


console_recorder = ConsoleRecorder()
