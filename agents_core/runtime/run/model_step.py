"""One model call of a run: read the thread's memory, call the model through litellm,
stream its text and tool calls, and save the step (its assistant message and tool calls).

`ModelStep` keeps what the calls of a run add up to (the usage, the last text, the model
that answered) and what a failed step leaves behind (its partial text, its message).

litellm is imported the first time a run needs it, in a thread (`litellm_module`)."""

from __future__ import annotations

import asyncio
import importlib
import sys
import time
from typing import Any

from agents_core.runtime.execution import heap, processes, stats
from agents_core.runtime.run import observers
from agents_core.runtime.run.errors import Aborted
from agents_core.runtime.run.run_context import RunContext
from agents_core.runtime.run.setup import ToolSpec
from agents_core.runtime.run.tool_input import CallState, ToolInput, display_input
from agents_core.runtime.storage import store
from agents_core.runtime.storage.db import db
from agents_core.runtime.storage.messages import memory_messages
from providers import fast_stream, model_stream
from providers.errors import model_error
from providers.fallbacks import open_stream

_imported: set[str] = set()


async def litellm_module(*, offline: bool) -> Any:
    """litellm, imported in a thread the first time: the import takes seconds, and the
    event loop serves every websocket of the process meanwhile. Imported through the import
    system until it has been once here (not looked up in sys.modules): a module another
    thread is still importing (runstudio's warm-up) is there half made, and the import
    waits for it to be whole."""
    for name in ("litellm", *(("providers.offline",) if offline else ())):
        if name not in _imported:
            await asyncio.to_thread(importlib.import_module, name)
            _imported.add(name)
    if not processes.uses_workers():
        heap.settle()  # a web process executing runs inline (once): see runtime/execution/heap.py
        processes.favour_the_loop_inline()
    return sys.modules["litellm"]


class ModelStep:
    """The model calls of a run, one a step (runtime/run/loop.py calls `call`)."""

    def __init__(self, ctx: RunContext) -> None:
        self.ctx = ctx
        self.tool_input = ToolInput(ctx)
        self.usage: dict[str, int] = {}
        self.last_text = ""
        # A step that fails mid-stream: the text so far and its message, kept by run_finish.
        self.partial_text = ""
        self.step_message: int | None = None
        self.memory_upto: int | None = None
        # The model that answered the last call (the agent's or a fallback), kept on the run.
        self.answered = ctx.setup.run.model

    async def call(self) -> tuple[list[CallState], str]:
        """The step's model call, streamed and saved: its tool calls and finish reason."""
        ctx = self.ctx
        setup = ctx.setup
        offline = any(call.model.startswith("studio/") for call in setup.model_calls)
        litellm = await litellm_module(offline=offline)
        # Signals delivered into this run are written to the thread's memory by the drain,
        # so reading the memory after it gives each of them to the model exactly once.
        drained, rows, calls, self.step_message = await db(
            store.step_begin, run=setup.run, limit=setup.options.get("lastMessages")
        )
        if drained:
            observers.notify("signals_drained", ctx.run_id, signals=drained)
        self.memory_upto = rows[-1].pk if rows else 0
        memory = memory_messages(rows, calls)
        specs = setup.active_specs()
        choice = setup.tool_choice()
        ctx.check_abort()

        sent: dict[str, Any] = {}

        def request(call: Any) -> dict[str, Any]:
            kwargs = setup.call_kwargs(call, memory, specs, choice)
            # One span per model tried: what each was sent, fallbacks included.
            observers.notify("model_call_started", ctx.run_id, step=ctx.step, request=kwargs)
            sent.update(kwargs)
            return kwargs

        response, call = await open_stream(litellm, setup.model_calls, request)
        # The provider's stream read without litellm's wrapper where it may be (fast_stream).
        response = fast_stream.reader(response, litellm, sent["messages"])
        # Kept on the run with the step (store.step_save), or by run_finish if it fails.
        self.answered = call.requested
        allowed = {spec.name: spec for spec in specs} if choice != "none" else {}
        return await self._consume(response, allowed, litellm)

    async def _consume(
        self, response: Any, specs: dict[str, ToolSpec], litellm: Any
    ) -> tuple[list[CallState], str]:
        ctx, tool_input = self.ctx, self.tool_input
        text: list[str] = []
        calls: dict[int, CallState] = {}
        current: CallState | None = None
        finish_reason = "stop"
        abort = ctx.active.abort
        perf = time.perf_counter
        self.partial_text = ""
        iterator = response.__aiter__()
        to_the_end = model_stream.read_to_the_end(response, litellm)
        model_stream.keep_less(response, to_the_end)
        chunk = None
        usage_counted = False
        reported: Any = None
        first_token: float | None = None
        try:
            while True:
                if chunk is not None and await model_stream.stop_at(response, chunk, to_the_end):
                    break  # litellm's assembly of the whole response is skipped
                try:
                    chunk = await iterator.__anext__()
                except StopAsyncIteration:
                    break
                if abort.is_set():
                    self.partial_text = "".join(text)
                    raise Aborted
                started = perf()
                usage = getattr(chunk, "usage", None)
                if usage:
                    self._add_usage(usage)
                    usage_counted = True
                    reported = usage
                if not chunk.choices:
                    continue
                choice = chunk.choices[0]
                delta = choice.delta
                content = getattr(delta, "content", None)
                if content:
                    if first_token is None:
                        first_token = time.time()
                    text.append(content)
                    ctx.sink.delta(
                        {
                            "type": "text-delta",
                            "runId": ctx.run_id,
                            "textDelta": content,
                            "step": ctx.step,
                        }
                    )
                for tool_delta in getattr(delta, "tool_calls", None) or []:
                    index = tool_delta.index if tool_delta.index is not None else 0
                    state = calls.get(index)
                    if state is None:
                        if first_token is None:
                            first_token = time.time()
                        if current is not None:
                            tool_input.end(current)
                        state = tool_input.start(index, tool_delta, specs)
                        calls[index] = state
                        current = state
                    arguments = getattr(tool_delta.function, "arguments", None) or ""
                    if arguments:
                        tool_input.delta(state, arguments)
                if choice.finish_reason:
                    finish_reason = choice.finish_reason
                stats.add("chunks")
                stats.add("chunk_s", perf() - started)
        except (Aborted, asyncio.CancelledError):
            self.partial_text = "".join(text)
            raise
        except Exception as exc:  # noqa: BLE001 - provider down mid-stream, malformed chunk
            self.partial_text = "".join(text)
            raise model_error(exc, self.answered or ctx.setup.agent.model) from exc
        if not usage_counted and chunk is not None:
            # Without include_usage, litellm gives the stream's usage on its last chunk.
            reported = model_stream.reported_usage(chunk)
            self._add_usage(reported)
        if current is not None:
            tool_input.end(current)
        full_text = "".join(text)
        ordered = [calls[i] for i in sorted(calls)]
        await self._save_step(full_text, ordered)
        self.partial_text = ""
        self.last_text = full_text
        finish = {"tool_calls": "tool-calls", "function_call": "tool-calls"}.get(
            finish_reason, finish_reason
        )
        observers.notify(
            "model_call_finished",
            ctx.run_id,
            usage=reported,
            finish_reason=finish_reason,
            first_token_at=first_token,
            response_model=getattr(chunk, "model", None),
        )
        return ordered, ("tool-calls" if ordered else finish)

    def _add_usage(self, usage: Any) -> None:
        for key in ("prompt_tokens", "completion_tokens", "total_tokens"):
            value = getattr(usage, key, None)
            if isinstance(value, int):
                self.usage[key] = self.usage.get(key, 0) + value

    async def _save_step(self, text: str, calls: list[CallState]) -> None:
        message_id, self.step_message = self.step_message, None
        pks = await db(
            store.step_save,
            run_id=self.ctx.run_id,
            thread_id=self.ctx.setup.thread_id,
            step=self.ctx.step,
            text=text,
            message_id=message_id,
            memory_upto=self.memory_upto,
            model=self.answered,
            calls=[
                {
                    "id": c.id,
                    "name": c.name,
                    "input": c.input,
                    "display": display_input(c),
                    "inputText": "".join(c.text),
                    "tool": c.spec.tool if c.spec is not None else None,
                }
                for c in calls
            ],
        )
        for call in calls:
            call.pk = pks[call.id]
