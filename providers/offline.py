"""The offline model: a deterministic litellm custom provider (`studio/scripted`).

It answers from the conversation and the tools it was given, without any network
(providers/offline_script.py says how).

Text streams word by word and tool arguments in small chunks; `optional_params` may set
`delay` (seconds between chunks; settings.STUDIO_OFFLINE_DELAY by default) and
`chunk_size` (characters per argument chunk), or choose a registered `Mode` (the
benchmarks' stamped deltas, bench/offline_stamps.py).

Import this module only where a model is called: it imports litellm (seconds).
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import re
import time
from collections.abc import AsyncIterator, Callable, Iterator
from dataclasses import dataclass
from typing import Any

import litellm
from django.conf import settings
from litellm import CustomLLM
from litellm.types.llms.openai import (
    ChatCompletionToolCallChunk,
    ChatCompletionToolCallFunctionChunk,
    ChatCompletionUsageBlock,
)
from litellm.types.utils import GenericStreamingChunk, ModelResponse

from providers.offline_script import _text_of, script

PROVIDER = "studio"
_WORD = re.compile(r"\s*\S+\s*")


# --- streaming -------------------------------------------------------------------------------
def _call_id(messages: list[dict[str, Any]], index: int) -> str:
    digest = hashlib.sha1(  # noqa: S324 - an id, not security
        json.dumps(messages, sort_keys=True, default=str).encode()
    ).hexdigest()
    return f"call_{digest[:12]}_{index}"


def _chunk(
    text: str = "",
    tool_use: ChatCompletionToolCallChunk | None = None,
    *,
    finish: str = "",
    usage: ChatCompletionUsageBlock | None = None,
) -> GenericStreamingChunk:
    return {
        "text": text,
        "tool_use": tool_use,
        "is_finished": bool(finish),
        "finish_reason": finish,
        "usage": usage,
        "index": 0,
    }


@dataclass(frozen=True)
class Mode:
    """Another answer than the script's, chosen by an optional parameter of the call:
    `chunks(messages, params)` makes its chunks, and `on_yield(chunk)` sees each as the
    provider yields it (after the pacing wait)."""

    chunks: Callable[[list[dict[str, Any]], dict[str, Any]], Iterator[GenericStreamingChunk]]
    on_yield: Callable[[GenericStreamingChunk], GenericStreamingChunk]


# The modes other code registers, by the name of the parameter that chooses them (the
# benchmarks' `stamp`: bench/offline_stamps.py).
MODES: dict[str, Mode] = {}


def _mode(params: dict[str, Any]) -> Mode | None:
    return next((mode for name, mode in MODES.items() if params.get(name)), None)


def chunks(
    messages: list[dict[str, Any]], optional_params: dict[str, Any]
) -> Iterator[GenericStreamingChunk]:
    """The scripted answer as streaming chunks (no delays)."""
    tools = optional_params.get("tools")
    tool_choice = optional_params.get("tool_choice", "auto")
    if optional_params.get("fail"):
        raise litellm.exceptions.APIConnectionError(
            message=str(optional_params["fail"]), llm_provider=PROVIDER, model="scripted"
        )
    mode = _mode(optional_params)
    if mode is not None:
        yield from mode.chunks(messages, optional_params)
        return
    text, calls = script(messages, tools, tool_choice)
    size = max(1, int(optional_params.get("chunk_size") or 8))
    words = _WORD.findall(text)
    for word in words:
        yield _chunk(word)
    for index, (name, arguments) in enumerate(calls):
        call_id = _call_id(messages, index)
        pieces = [arguments[i : i + size] for i in range(0, len(arguments), size)] or [""]
        for number, piece in enumerate(pieces):
            function: ChatCompletionToolCallFunctionChunk = {
                "name": name if number == 0 else None,
                "arguments": piece,
            }
            yield _chunk(
                tool_use={
                    "id": call_id if number == 0 else None,
                    "type": "function",
                    "function": function,
                    "index": index,
                }
            )
    prompt_tokens = sum(len(_text_of(m).split()) for m in messages)
    usage: ChatCompletionUsageBlock = {
        "prompt_tokens": prompt_tokens,
        "completion_tokens": len(words) + len(calls),
        "total_tokens": prompt_tokens + len(words) + len(calls),
    }
    yield _chunk(finish="tool_calls" if calls else "stop", usage=usage)


def _delay(optional_params: dict[str, Any]) -> float:
    if "delay" in optional_params:
        return float(optional_params["delay"] or 0)
    # About 50 chunks a second by default: the UI streams visibly, like a real model.
    return float(settings.STUDIO_OFFLINE_DELAY)


def _materialise(
    messages: list[dict[str, Any]],
    optional_params: dict[str, Any],
    model_response: ModelResponse | None,
) -> ModelResponse:
    text, finish, usage = "", "stop", None
    calls: dict[int, dict[str, Any]] = {}
    for chunk in chunks(messages, optional_params):
        text += chunk["text"]
        tool_use = chunk["tool_use"]
        if tool_use:
            call = calls.setdefault(
                tool_use["index"],
                {
                    "id": tool_use["id"],
                    "type": "function",
                    "function": {"name": "", "arguments": ""},
                },
            )
            call["function"]["name"] += tool_use["function"]["name"] or ""
            call["function"]["arguments"] += tool_use["function"]["arguments"]
        if chunk["is_finished"]:
            finish, usage = chunk["finish_reason"], chunk["usage"]
    message: dict[str, Any] = {"role": "assistant", "content": text or None}
    if calls:
        message["tool_calls"] = [calls[i] for i in sorted(calls)]
    return litellm.ModelResponse(
        model="studio/scripted",
        choices=[{"index": 0, "message": message, "finish_reason": finish}],
        usage=usage,
    )


class ScriptedLLM(CustomLLM):
    """The `studio` provider of litellm."""

    def completion(self, model: str, messages: list, *args: Any, **kwargs: Any) -> ModelResponse:
        return _materialise(
            messages, kwargs.get("optional_params") or {}, kwargs.get("model_response")
        )

    async def acompletion(
        self, model: str, messages: list, *args: Any, **kwargs: Any
    ) -> ModelResponse:
        return self.completion(model, messages, *args, **kwargs)

    def streaming(
        self, model: str, messages: list, *args: Any, **kwargs: Any
    ) -> Iterator[GenericStreamingChunk]:
        params = kwargs.get("optional_params") or {}
        delay = _delay(params)
        for chunk in chunks(messages, params):
            if delay:
                time.sleep(delay)
            yield chunk

    # litellm declares astreaming a coroutine that returns the iterator, yet iterates what
    # it returns with `async for` (CustomStreamWrapper): an async generator is what works.
    async def astreaming(  # type: ignore[override]
        self, model: str, messages: list, *args: Any, **kwargs: Any
    ) -> AsyncIterator[GenericStreamingChunk]:
        params = kwargs.get("optional_params") or {}
        delay = _delay(params)
        mode = _mode(params)
        seen = mode.on_yield if mode is not None else _as_is
        if delay:
            # A fixed rate, not a fixed gap: the time the consumer spends between chunks
            # does not slow the stream down (benchmarks set the rate this way).
            # After a stall (the consumer was busy) the schedule is re-anchored instead of
            # catching up in one burst.
            start = time.monotonic()
            for number, chunk in enumerate(chunks(messages, params), 1):
                now = time.monotonic()
                wait = start + number * delay - now
                if wait > 0:
                    await asyncio.sleep(wait)
                elif wait < -2 * delay:
                    start = now - number * delay
                yield seen(chunk)
            return
        for chunk in chunks(messages, params):
            yield seen(chunk)


def _as_is(chunk: GenericStreamingChunk) -> GenericStreamingChunk:
    return chunk


_handler = ScriptedLLM()


def register() -> None:
    """Make `studio/...` models resolve to the scripted provider (idempotent)."""
    if not any(item.get("provider") == PROVIDER for item in litellm.custom_provider_map):
        litellm.custom_provider_map = [
            *litellm.custom_provider_map,
            {"provider": PROVIDER, "custom_handler": _handler},
        ]
        from litellm.utils import custom_llm_setup

        custom_llm_setup()
        # Its price (nothing) and kind, as litellm's cost map holds them for a real model:
        # unknown, litellm searched its whole map for a near match on every call (about a
        # quarter of a short call's CPU) and logged a zero-cost finding each time.
        litellm.register_model(
            {
                f"{PROVIDER}/scripted": {
                    "litellm_provider": PROVIDER,
                    "mode": "chat",
                    "supports_function_calling": True,
                    "input_cost_per_token": 0.0,
                    "output_cost_per_token": 0.0,
                    "cache_creation_input_token_cost": 0.0,
                    "cache_read_input_token_cost": 0.0,
                }
            }
        )


register()
