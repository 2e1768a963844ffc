"""Storing spans: the process's span writer, which writes the spans every run of an
event loop hands over together, one statement for all of them, and the rows it writes
(a model span's cost from litellm's local cost map is computed here, off the run's loop).

A run hands its spans over at step boundaries without waiting (`put(..., wait=False)`):
they are written behind it, off the path of its stream. At its end, and before an async
tool call a worker will close, it waits for its spans to be stored (`wait=True`). Whatever
runs hand over while a write is under way goes in the next one, so a hundred runs ending
together make a few statements instead of a hundred. Items are written in the order they
were handed over; a span handed over twice in one write is written once, as it is last.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from agents_core.runtime.storage.db import db
from tools_app.redaction import Secrets
from traces.models import Span
from traces.spans_sql import spans_upsert

logger = logging.getLogger(__name__)


@dataclass
class Batch:
    """What one run hands over: its spans to insert or update, and the suspensions its
    resume closes (span id, end)."""

    run_id: str
    trace_id: str
    spans: list[Any]
    closes: list[tuple[str, float]] = field(default_factory=list)
    # The run's secrets (tools_app.redaction): taken out of each span before it is stored.
    secrets: Secrets | None = None


class SpanWriter:
    """One per event loop: a queue and the task that empties it through `write_many`
    (a synchronous function of a list of batches, run in the runtime's database threads)."""

    def __init__(self, write_many: Callable[[list[Batch]], None]) -> None:
        self.write_many = write_many
        self.queue: list[tuple[Batch, asyncio.Future | None]] = []
        self.task: asyncio.Task | None = None

    def put(self, batch: Batch, *, wait: bool) -> asyncio.Future | None:
        """Queue a batch; with `wait`, a future done once it is stored (or failed)."""
        loop = asyncio.get_running_loop()
        done = loop.create_future() if wait else None
        self.queue.append((batch, done))
        if self.task is None or self.task.done():
            self.task = loop.create_task(self._drain())
        return done

    async def _drain(self) -> None:
        while self.queue:
            items, self.queue = self.queue, []
            try:
                await db(self.write_many, [batch for batch, _ in items])
                error: BaseException | None = None
            except Exception as exc:  # noqa: BLE001 - handed to the waiting runs, or logged
                error = exc
                if not any(done is not None for _, done in items):
                    logger.exception("Writing the spans of %d runs failed", len(items))
            for _, done in items:
                if done is None or done.done():
                    continue
                if error is None:
                    done.set_result(None)
                else:
                    done.set_exception(error)


_writers: dict[asyncio.AbstractEventLoop, SpanWriter] = {}


def writer_for(write_many: Callable[[list[Batch]], None]) -> SpanWriter:
    """The span writer of the running event loop (made on first use)."""
    loop = asyncio.get_running_loop()
    for other in [other for other in _writers if other.is_closed()]:
        _writers.pop(other, None)  # a test's loop that is gone
    writer = _writers.get(loop)
    if writer is None:
        writer = _writers[loop] = SpanWriter(write_many)
    return writer


def _when(stamp: float | None) -> datetime | None:
    return None if stamp is None else datetime.fromtimestamp(stamp, tz=UTC)


def model_cost(attributes: dict[str, Any]) -> float | None:
    """The call's cost in USD from litellm's local cost map; None for a model it does not
    price. Computed when the span is written, off the run's event loop."""
    import litellm

    model, answered = attributes.get("model") or "", attributes.get("response_model") or ""
    if answered and "/" not in answered and "/" in model:
        answered = f"{model.split('/')[0]}/{answered}"  # the provider's name for its model
    for name in dict.fromkeys(filter(None, (answered, model))):
        try:
            prompt, completion = litellm.cost_per_token(
                model=name,
                prompt_tokens=attributes.get("input_tokens") or 0,
                completion_tokens=attributes.get("output_tokens") or 0,
            )
        except Exception:  # noqa: BLE001, S112 - litellm raises for a model it does not price
            continue
        return prompt + completion
    return None


def _row(span: Any, *, batch: Batch) -> Span:
    attributes = dict(span.attributes)
    if attributes.pop("cost_pending", False):
        attributes["cost_usd"] = model_cost(attributes)
    error = span.error
    if batch.secrets:
        error, attributes = batch.secrets.text(error), batch.secrets.value(attributes)
    return Span(
        span_id=span.span_id,
        trace_id=batch.trace_id,
        parent_id=span.parent_id,
        run_id=batch.run_id,
        kind=span.kind,
        name=span.name[:200],
        start=_when(span.start),
        end=_when(span.end),
        status=span.status,
        error=error,
        attributes=attributes,
    )


def spans_write_many(batches: list[Batch]) -> None:
    """One statement for the spans of every batch (an open span stored before is updated,
    its start kept; a span in two batches is written as the later one has it), one per
    suspension a resume closes."""
    latest = {
        span.span_id: (span, batch)
        for batch in batches
        for span in batch.spans  # later batches replace earlier ones
    }
    rows = [_row(span, batch=batch) for span, batch in latest.values()]
    if rows:
        spans_upsert(rows)
    for batch in batches:
        for span_id, end in batch.closes:
            Span.objects.filter(span_id=span_id, end__isnull=True).update(end=_when(end))
