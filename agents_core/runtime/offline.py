"""The offline model: a deterministic litellm custom provider (`studio/scripted`).

It reads the conversation and the tools it was given, and answers the way a helpful
model would, without any network (DESIGN.md section 4):

- "use weather_lookup for Paris", "call unit_convert with {"value": 3, ...}": calls the
  named tools (several when several are named), with the JSON object written in the
  message as arguments, or arguments generated from the tool's input schema and the words
  of the message ("for Paris" fills the first required string, numbers and enum values
  mentioned fill numbers and enums);
- "ask me ...": calls `ask_user`; "... plan ...": calls `submit_plan`; "agent-<key>" or
  "ask the <key>": calls the sub-agent tool `agent-<key>` with the message as prompt;
- after tool results (or a `<context>` message about a finished background job) it
  answers with a text that summarises them; otherwise it says what it can do.

Text streams word by word and tool arguments in small chunks; `optional_params` may set
`delay` (seconds between chunks; settings.STUDIO_OFFLINE_DELAY by default), `chunk_size`
(characters per argument chunk) and `stamp` (benchmarks: deltas carry their index and the
time they were yielded).

Import this module only where a model is called: it imports litellm (seconds).
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import re
import time
from collections.abc import AsyncIterator, Iterator
from typing import Any

import litellm
from litellm import CustomLLM
from litellm.types.utils import GenericStreamingChunk, ModelResponse

from agents_core.runtime.offline_citations import cite_knowledge, is_knowledge_result
from agents_core.runtime.offline_judge import judge_reply

PROVIDER = "studio"
SUBAGENT_PREFIX = "agent-"
_WORD = re.compile(r"\s*\S+\s*")
_NUMBER = re.compile(r"-?\d+(?:\.\d+)?")
_SUBJECT = re.compile(
    r"\b(?:for|in|of|about|on|called|named)\s+([^,.;:!?{}\[\]\"]+?)(?=\s+(?:and|then|with|to|"
    r"using|in|please)\b|[,.;:!?{}\[\]\"]|$)",
    re.IGNORECASE,
)


# --- the script: what the model "decides" ------------------------------------------------
def _text_of(message: dict[str, Any]) -> str:
    content = message.get("content")
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return " ".join(part.get("text", "") for part in content if isinstance(part, dict))
    return ""


def _tool_names(tools: list[dict[str, Any]] | None) -> dict[str, dict[str, Any]]:
    return {
        tool["function"]["name"]: tool["function"]
        for tool in tools or []
        if tool.get("type") == "function"
    }


def _balanced_json(text: str) -> str | None:
    """The first balanced {...} in the text (as written, so malformed JSON stays malformed)."""
    start = text.find("{")
    while start != -1:
        depth, in_string, escaped = 0, False, False
        for index in range(start, len(text)):
            char = text[index]
            if in_string:
                if escaped:
                    escaped = False
                elif char == "\\":
                    escaped = True
                elif char == '"':
                    in_string = False
            elif char == '"':
                in_string = True
            elif char == "{":
                depth += 1
            elif char == "}":
                depth -= 1
                if depth == 0:
                    return text[start : index + 1]
        start = text.find("{", start + 1)
    return None


class _Filler:
    """Generates arguments from a JSON Schema and the words of the user's message."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.lower = text.lower()
        self.subjects = [m.group(1).strip() for m in _SUBJECT.finditer(text)]
        self.numbers = [float(n) if "." in n else int(n) for n in _NUMBER.findall(text)]
        self.used_enum: set[str] = set()

    def value(self, schema: dict[str, Any], name: str = "", required: bool = True) -> Any:
        if "const" in schema:
            return schema["const"]
        if "enum" in schema:
            return self._enum(schema["enum"])
        kind = schema.get("type")
        if isinstance(kind, list):
            kind = next((k for k in kind if k != "null"), "string")
        if kind is None and "properties" in schema:
            kind = "object"
        if "default" in schema and not required:
            return schema["default"]
        if kind == "object":
            return self.object(schema)
        if kind == "array":
            items = schema.get("items") or {"type": "string"}
            count = max(1, int(schema.get("minItems", 1)))
            return [self.value(items, name) for _ in range(count)]
        if kind in ("number", "integer"):
            if self.numbers:
                number = self.numbers.pop(0)
                return int(number) if kind == "integer" else number
            return schema.get("minimum", 1)
        if kind == "boolean":
            return False
        return self._string(name)

    def object(self, schema: dict[str, Any]) -> dict[str, Any]:
        required = set(schema.get("required") or [])
        result: dict[str, Any] = {}
        for name, prop in (schema.get("properties") or {}).items():
            if name in required or self._mentioned(name):
                result[name] = self.value(prop or {}, name, name in required)
        return result

    def _mentioned(self, name: str) -> bool:
        return bool(re.search(rf"\b{re.escape(name.lower())}\b", self.lower))

    def _enum(self, options: list[Any]) -> Any:
        # Pick enum values in the order the message mentions them; each once.
        mentioned = sorted(
            (
                (match.start(), option)
                for option in options
                if isinstance(option, str) and option not in self.used_enum
                for match in [re.search(rf"\b{re.escape(option.lower())}\b", self.lower)]
                if match
            ),
            key=lambda pair: pair[0],
        )
        choice = mentioned[0][1] if mentioned else options[0]
        if isinstance(choice, str):
            self.used_enum.add(choice)
        return choice

    def _string(self, name: str) -> str:
        if name in ("question", "prompt", "message", "text", "query", "task", "plan", "title"):
            return self.text.strip()
        if self.subjects:
            return self.subjects.pop(0)
        return self.text.strip()[:80] or name


def _ask_user_arguments(tool: dict[str, Any], text: str) -> dict[str, Any]:
    question = re.split(r"\bask me\b", text, maxsplit=1, flags=re.IGNORECASE)[-1].strip(" :,.")
    question = question[:1].upper() + question[1:] if question else "What should I do?"
    if not question.endswith("?"):
        question += "?"
    arguments: dict[str, Any] = {"question": question}
    options = re.search(r"\b(?:options?|choices?|between)\b:?\s*(.+)$", text, re.IGNORECASE)
    properties = (tool.get("parameters") or {}).get("properties") or {}
    if options and "options" in properties:
        values = [v.strip(" .?") for v in re.split(r",|\bor\b|\band\b", options.group(1))]
        values = [v for v in values if v]
        if values:
            arguments["options"] = values
            arguments["question"] = question.split(options.group(0))[0].strip(" ,") or question
            multi = re.search(r"\b(several|multiple|any of)\b", text, re.IGNORECASE)
            if "mode" in properties:
                arguments["mode"] = "multi" if multi else "single"
            elif "type" in properties:
                arguments["type"] = "multi_select" if multi else "single_select"
    filler = _Filler(text)
    for name in (tool.get("parameters") or {}).get("required") or []:
        if name not in arguments:
            arguments[name] = filler.value(properties.get(name) or {}, name)
    return arguments


def _plan_arguments(tool: dict[str, Any], text: str) -> dict[str, Any]:
    goal = re.split(r"\bplan\b", text, maxsplit=1, flags=re.IGNORECASE)[-1].strip(" :,.") or text
    steps = [f"Understand the request: {goal}", "Use the available tools", "Report back"]
    properties = (tool.get("parameters") or {}).get("properties") or {}
    arguments: dict[str, Any] = {}
    filler = _Filler(text)
    for name, prop in properties.items():
        if name in ("title", "summary", "goal"):
            arguments[name] = f"Plan: {goal}"
        elif name in ("steps", "items"):
            item = (prop or {}).get("items") or {"type": "string"}
            if item.get("type") == "object":
                key = next(iter(item.get("properties") or {"title": {}}))
                arguments[name] = [{key: step} for step in steps]
            else:
                arguments[name] = steps
        elif name == "plan":
            arguments[name] = "\n".join(f"{i}. {s}" for i, s in enumerate(steps, 1))
        elif name in ((tool.get("parameters") or {}).get("required") or []):
            arguments[name] = filler.value(prop or {}, name)
    return arguments


def _mentions(lower: str, name: str) -> int:
    spoken = name.replace("_", " ")
    for candidate in (name.lower(), spoken.lower()):
        match = re.search(rf"(?<![\w-]){re.escape(candidate)}(?![\w-])", lower)
        if match:
            return match.start()
    return -1


def choose_calls(
    text: str, tools: dict[str, dict[str, Any]], tool_choice: Any
) -> list[tuple[str, str]]:
    """The (tool name, argument text) calls the user's message asks for."""
    lower = text.lower()
    forced = None
    if isinstance(tool_choice, dict):
        forced = (tool_choice.get("function") or {}).get("name")
    picked: list[tuple[int, str]] = []
    for name in tools:
        position = _mentions(lower, name)
        if position >= 0:
            picked.append((position, name))
    if SUBAGENT_PREFIX and not any(n.startswith(SUBAGENT_PREFIX) for _, n in picked):
        for name in tools:
            if name.startswith(SUBAGENT_PREFIX):
                key = name[len(SUBAGENT_PREFIX) :]
                match = re.search(rf"\b(?:ask|delegate to|use) the {re.escape(key)}\b", lower)
                if match:
                    picked.append((match.start(), name))
    if "ask_user" in tools and "ask_user" not in {n for _, n in picked}:
        match = re.search(r"\bask me\b", lower)
        if match:
            picked.append((match.start(), "ask_user"))
    if "submit_plan" in tools and "submit_plan" not in {n for _, n in picked}:
        match = re.search(r"\b(?:make|submit|propose|write) (?:a |me a |the )?plan\b", lower)
        if match:
            picked.append((match.start(), "submit_plan"))
    names = [name for _, name in sorted(picked)]
    if forced:
        names = [forced]
    elif tool_choice == "required" and not names and tools:
        names = [next(iter(tools))]
    raw_json = _balanced_json(text)
    calls = []
    for index, name in enumerate(names):
        tool = tools.get(name) or {"name": name, "parameters": {}}
        if name == "ask_user":
            arguments = json.dumps(_ask_user_arguments(tool, text))
        elif name == "submit_plan":
            arguments = json.dumps(_plan_arguments(tool, text))
        elif name.startswith(SUBAGENT_PREFIX):
            arguments = json.dumps({"prompt": text.strip()})
        elif raw_json is not None and index == 0:
            arguments = raw_json
        else:
            arguments = json.dumps(_Filler(text).object(tool.get("parameters") or {}))
        calls.append((name, arguments))
    return calls


def _compact(value: Any, limit: int = 240) -> str:
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def summarise(results: list[dict[str, Any]], names: dict[str, str]) -> str:
    lines = []
    for message in results:
        name = names.get(message.get("tool_call_id", ""), "the tool")
        content = _text_of(message)
        try:
            value = json.loads(content)
        except (TypeError, ValueError):
            value = content
        if isinstance(value, dict) and value.get("status") == "pending" and len(value) <= 2:
            lines.append(f"{name} is running in the background; I will report when it is done.")
        elif is_knowledge_result(value):
            lines.append(cite_knowledge(value))
        elif isinstance(value, dict) and (value.get("isError") or "error" in value):
            lines.append(f"{name} failed: {_compact(value.get('error', value))}")
        else:
            lines.append(f"{name} returned {_compact(value)}.")
    return "Here is what I found. " + " ".join(lines)


def script(
    messages: list[dict[str, Any]], tools: list[dict[str, Any]] | None, tool_choice: Any
) -> tuple[str, list[tuple[str, str]]]:
    """(text, [(tool name, argument text)]) for the next assistant turn."""
    if (verdict := judge_reply(messages)) is not None:  # a judge request (evals)
        return verdict, []
    available = _tool_names(tools) if tool_choice != "none" else {}
    tail: list[dict[str, Any]] = []
    for message in reversed(messages):
        if message.get("role") in ("tool",) or (
            message.get("role") == "user" and _text_of(message).startswith("<context>")
        ):
            tail.append(message)
            continue
        break
    tail.reverse()
    if tail:
        names = {
            call["id"]: call["function"]["name"]
            for message in messages
            if message.get("role") == "assistant"
            for call in message.get("tool_calls") or []
        }
        tool_results = [m for m in tail if m.get("role") == "tool"]
        contexts = [_text_of(m) for m in tail if m.get("role") == "user"]
        parts = []
        if tool_results:
            parts.append(summarise(tool_results, names))
        for context in contexts:
            parts.append("A background job finished: " + _compact(context, 400))
        if tool_choice == "required" and available:
            name = next(iter(available))
            return "Calling again. ", [
                (name, json.dumps(_Filler("").object(available[name].get("parameters") or {})))
            ]
        return " ".join(parts), []
    last_user = next((m for m in reversed(messages) if m.get("role") == "user"), None)
    text = _text_of(last_user) if last_user else ""
    # Background results that arrived since the last answer are mentioned first.
    news = []
    for message in reversed(messages[:-1]):
        if message.get("role") == "assistant":
            break
        if message.get("role") == "user" and _text_of(message).startswith("<context>"):
            news.insert(0, "A background job finished: " + _compact(_text_of(message), 400) + " ")
    calls = choose_calls(text, available, tool_choice)
    if calls:
        names = ", ".join(name for name, _ in calls)
        return "".join(news) + f"Calling {names}. ", calls
    if news:
        return "".join(news).strip(), []
    if available:
        listed = ", ".join(sorted(available))
        return (
            f"I am the offline scripted model. You said: {text.strip()!r}. "
            f"Name a tool and I will call it (I have: {listed}).",
            [],
        )
    return f"I am the offline scripted model. You said: {text.strip()!r}.", []


# --- streaming -------------------------------------------------------------------------------
def _call_id(messages: list[dict[str, Any]], index: int) -> str:
    digest = hashlib.sha1(  # noqa: S324 - an id, not security
        json.dumps(messages, sort_keys=True, default=str).encode()
    ).hexdigest()
    return f"call_{digest[:12]}_{index}"


def _chunk(
    text: str = "",
    tool_use: dict[str, Any] | None = None,
    *,
    finish: str = "",
    usage: dict[str, int] | None = None,
) -> GenericStreamingChunk:
    return {
        "text": text,
        "tool_use": tool_use,
        "is_finished": bool(finish),
        "finish_reason": finish,
        "usage": usage,
        "index": 0,
    }


class _Stamp:
    """Benchmarks: each delta carries `<index>@<unix time>;` so a client can measure latency."""

    def __init__(self) -> None:
        self.index = 0

    def __call__(self) -> str:
        self.index += 1
        return f"{self.index:07d}@{time.time():.6f};"


_STAMP_INDEX = len("0000000@")


def _restamped(text: str) -> str:
    return text[:_STAMP_INDEX] + f"{time.time():.6f};" if text[7:8] == "@" else text


def _restamp(chunk: GenericStreamingChunk) -> GenericStreamingChunk:
    """Benchmarks: a delta's time is when the provider yields it, not when it was made
    (before the wait that sets the rate). A stamp is a whole delta (see `_bench_chunks`)."""
    chunk["text"] = _restamped(chunk["text"])
    if chunk["tool_use"]:
        function = chunk["tool_use"]["function"]
        function["arguments"] = _restamped(function["arguments"])
    return chunk


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
    if optional_params.get("stamp"):
        yield from _bench_chunks(messages, optional_params)
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
            function = {"name": name if number == 0 else None, "arguments": piece}
            yield _chunk(
                tool_use={
                    "id": call_id if number == 0 else None,
                    "type": "function",
                    "function": function,
                    "index": index,
                }
            )
    prompt_tokens = sum(len(_text_of(m).split()) for m in messages)
    usage = {
        "prompt_tokens": prompt_tokens,
        "completion_tokens": len(words) + len(calls),
        "total_tokens": prompt_tokens + len(words) + len(calls),
    }
    yield _chunk(finish="tool_calls" if calls else "stop", usage=usage)


def _bench_chunks(
    messages: list[dict[str, Any]], params: dict[str, Any]
) -> Iterator[GenericStreamingChunk]:
    """Benchmarks: `stamp` deltas, half as text and half as the argument of the first tool."""
    count = int(params.get("stamp"))
    tools = _tool_names(params.get("tools"))
    after_tools = messages and messages[-1].get("role") == "tool"
    stamp = _Stamp()
    # Like a real provider, each stream ends with its usage (one token per delta).
    if after_tools:
        yield _chunk("done.")
        yield _chunk(finish="stop", usage=_usage(1))
        return
    if not tools:
        for _ in range(count):
            yield _chunk(stamp())
        yield _chunk(finish="stop", usage=_usage(count))
        return
    for _ in range(count // 2):
        yield _chunk(stamp())
    name = next(iter(tools))
    call_id = _call_id(messages, 0)
    yield _chunk(
        tool_use={
            "id": call_id,
            "type": "function",
            "index": 0,
            "function": {"name": name, "arguments": '{"log": "'},
        }
    )
    for _ in range(count - count // 2):
        yield _chunk(
            tool_use={
                "id": None,
                "type": "function",
                "index": 0,
                "function": {"name": None, "arguments": stamp()},
            }
        )
    yield _chunk(
        tool_use={
            "id": None,
            "type": "function",
            "index": 0,
            "function": {"name": None, "arguments": '"}'},
        }
    )
    yield _chunk(finish="tool_calls", usage=_usage(count))


def _usage(completion_tokens: int) -> dict[str, int]:
    return {
        "prompt_tokens": 1,
        "completion_tokens": completion_tokens,
        "total_tokens": completion_tokens + 1,
    }


def _delay(optional_params: dict[str, Any]) -> float:
    if "delay" in optional_params:
        return float(optional_params["delay"] or 0)
    from django.conf import settings

    # About 50 chunks a second by default: the UI streams visibly, like a real model.
    return float(getattr(settings, "STUDIO_OFFLINE_DELAY", 0.02))


def _materialise(
    messages: list[dict[str, Any]], optional_params: dict[str, Any], model_response: ModelResponse
) -> ModelResponse:
    text, calls, finish, usage = "", {}, "stop", None
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
    message = {"role": "assistant", "content": text or None}
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

    async def astreaming(
        self, model: str, messages: list, *args: Any, **kwargs: Any
    ) -> AsyncIterator[GenericStreamingChunk]:
        params = kwargs.get("optional_params") or {}
        delay = _delay(params)
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
                yield _restamp(chunk) if params.get("stamp") else chunk
            return
        for chunk in chunks(messages, params):
            yield _restamp(chunk) if params.get("stamp") else chunk


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
