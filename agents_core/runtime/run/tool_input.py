"""The tool calls a model streams: each call's state while its arguments arrive, parsed
incrementally and sent as patches (`tool-input-start`, `-delta`, `-end`), shown through the
tool's display transform, and the tool's input lifecycle hooks.

`ToolInput` is the helper the model step (runtime/run/model_step.py) feeds a call's deltas
to; `display`, `display_input` and `kind` are what the tool calls show of a call too."""

from __future__ import annotations

import asyncio
import copy
import inspect
import logging
from dataclasses import dataclass, field
from typing import Any

from agents_core.runtime.run.partial_json import IncrementalJSONParser, PartialJSONError
from agents_core.runtime.run.run_context import RunContext
from agents_core.runtime.run.setup import ToolSpec
from tools_app.definitions import display_value

logger = logging.getLogger(__name__)

HIDDEN = "The display transform of this tool failed; its value is hidden."


@dataclass
class CallState:
    index: int
    id: str
    name: str
    spec: ToolSpec | None
    parser: IncrementalJSONParser = field(default_factory=IncrementalJSONParser)
    text: list[str] = field(default_factory=list)
    parse_error: str = ""
    input: Any = None
    input_error: str = ""
    ended: bool = False
    pk: int | None = None
    hidden: bool = False
    hook_decisions: list[dict[str, Any]] = field(default_factory=list)


def lifecycle(spec: ToolSpec | None, name: str, payload: dict[str, Any]) -> None:
    """on_input_start / on_input_delta / on_input_available / on_output: notifications;
    they run inline (keep them cheap) and their failures are logged, never fatal."""
    definition = spec.definition if spec is not None else None
    fn = getattr(definition, name, None) if definition is not None else None
    if fn is None:
        return
    try:
        result = fn(payload)
        if inspect.isawaitable(result):
            task = asyncio.ensure_future(result)
            task.add_done_callback(lambda t: t.exception())
    except Exception:  # noqa: BLE001
        logger.exception("Tool %s hook %s failed", getattr(spec, "name", "?"), name)


def kind(spec: ToolSpec | None) -> str:
    """What the chat shows a call as: an agent, the tool's type, or unknown."""
    if spec is None:
        return "unknown"
    return "agent" if spec.kind == "subagent" else getattr(spec.tool, "kind", "code")


def display(state: CallState | None, transform: Any, value: Any, phase: str) -> Any:
    """What the page and the transcript see; a failing transform hides the value."""
    if transform is None:
        return value
    shown, ok = display_value(transform, value, phase, getattr(state, "name", "?"))
    if not ok and state is not None:
        state.hidden = True
    return shown


def display_input(call: CallState) -> Any:
    transform = getattr(call.spec.definition, "transform", None) if call.spec else None
    if transform is None or call.input is None:
        return call.input
    return display(call, transform, call.input, "input")


class ToolInput:
    """A step's streamed tool input: each call's start, argument deltas and end, as
    events on the run's sink."""

    def __init__(self, ctx: RunContext) -> None:
        self.ctx = ctx

    def start(self, index: int, tool_delta: Any, specs: dict[str, ToolSpec]) -> CallState:
        ctx = self.ctx
        name = getattr(tool_delta.function, "name", None) or ""
        call_id = tool_delta.id or f"call_{ctx.run_id[:8]}_{ctx.step}_{index}"
        state = CallState(index=index, id=call_id, name=name, spec=specs.get(name))
        ctx.sink.delta(
            {
                "type": "tool-input-start",
                "runId": ctx.run_id,
                "toolCallId": call_id,
                "toolName": name,
                "step": ctx.step,
                "kind": kind(state.spec),
            }
        )
        lifecycle(state.spec, "on_input_start", {"toolCallId": call_id, "toolName": name})
        return state

    def delta(self, state: CallState, arguments: str) -> None:
        sink, run_id = self.ctx.sink, self.ctx.run_id
        state.text.append(arguments)
        patches: list[dict[str, Any]] = []
        if not state.parse_error:
            try:
                patches = state.parser.feed(arguments)
            except PartialJSONError as exc:
                state.parse_error = str(exc)
        transform = getattr(state.spec.definition, "transform", None) if state.spec else None
        if transform is None:
            sink.delta(
                {
                    "type": "tool-input-delta",
                    "runId": run_id,
                    "toolCallId": state.id,
                    "toolName": state.name,
                    "argsTextDelta": arguments,
                    "patches": patches,
                }
            )
        elif not state.hidden:
            shown = display(state, transform, copy.deepcopy(state.parser.value()), "input")
            if state.hidden:
                sink.delta(
                    {
                        "type": "tool-input-delta",
                        "runId": run_id,
                        "toolCallId": state.id,
                        "toolName": state.name,
                        "patches": [],
                        "hidden": True,
                        "transformError": HIDDEN,
                    }
                )
            else:
                sink.delta(
                    {
                        "type": "tool-input-delta",
                        "runId": run_id,
                        "toolCallId": state.id,
                        "toolName": state.name,
                        "patches": [{"op": "set", "path": [], "value": shown}],
                        "transformed": True,
                    }
                )
        lifecycle(
            state.spec,
            "on_input_delta",
            {"toolCallId": state.id, "argsTextDelta": arguments, "patches": patches},
        )

    def end(self, state: CallState) -> None:
        if state.ended:
            return
        state.ended = True
        text = "".join(state.text)
        if state.parse_error:
            state.input_error = f"The arguments are not valid JSON: {state.parse_error}"
        elif not text.strip():
            state.input = {}
        else:
            try:
                state.input = state.parser.finish()
            except PartialJSONError as exc:
                state.input_error = f"The arguments are not valid JSON: {exc}"
        self.ctx.sink.delta(
            {
                "type": "tool-input-end",
                "runId": self.ctx.run_id,
                "toolCallId": state.id,
                "toolName": state.name,
            }
        )
        if not state.input_error:
            lifecycle(
                state.spec,
                "on_input_available",
                {"toolCallId": state.id, "toolName": state.name, "input": state.input},
            )
