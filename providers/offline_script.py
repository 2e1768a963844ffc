"""The offline model's script: what `studio/scripted` answers to a conversation, the way a
helpful model would (providers/offline.py streams it through litellm).

- "use weather_lookup for Paris", "call unit_convert with {"value": 3, ...}": calls the
  named tools (several when several are named), with the JSON object written in the
  message as arguments, or arguments generated from the tool's input schema and the words
  of the message ("for Paris" fills the first required string, numbers and enum values
  mentioned fill numbers and enums);
- "ask me ...": calls `ask_user`; "... plan ...": calls `submit_plan`; "agent-<key>" or
  "ask the <key>": calls the sub-agent tool `agent-<key>` with the message as prompt;
- after tool results, and for `<context>` messages about finished background jobs that no
  answer mentioned yet, it answers with a text that summarises them; otherwise it says
  what it can do.
"""

from __future__ import annotations

import json
import re
from typing import Any

from providers.offline_citations import cite_knowledge, is_knowledge_result
from providers.offline_judge import judge_reply
from providers.offline_title import title_reply

SUBAGENT_PREFIX = "agent-"
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


def _context_line(message: dict[str, Any]) -> str:
    return "A background job finished: " + _compact(_text_of(message), 400)


def _is_context(message: dict[str, Any]) -> bool:
    return message.get("role") == "user" and _text_of(message).startswith("<context>")


def _unmentioned_contexts(messages: list[dict[str, Any]]) -> list[str]:
    """The `<context>` messages (a finished background job) that no later assistant
    message mentions. Their place in the thread is when they were numbered, which is not
    always when they were committed: a job that finishes while a step streams can sit
    before that step's answer although the step never saw it. What was answered is told by
    the answers themselves, so each job is mentioned once, wherever it sits."""
    lines: list[str] = []
    answered = ""
    for message in reversed(messages):
        if message.get("role") == "assistant":
            answered += _text_of(message)
        elif _is_context(message):
            line = _context_line(message)
            if line not in answered:
                lines.insert(0, line)
    return lines


def script(
    messages: list[dict[str, Any]], tools: list[dict[str, Any]] | None, tool_choice: Any
) -> tuple[str, list[tuple[str, str]]]:
    """(text, [(tool name, argument text)]) for the next assistant turn."""
    if (verdict := judge_reply(messages)) is not None:  # a judge request (evals)
        return verdict, []
    if (title := title_reply(messages)) is not None:  # a thread title request
        return title, []
    available = _tool_names(tools) if tool_choice != "none" else {}
    tail: list[dict[str, Any]] = []
    for message in reversed(messages):
        if message.get("role") == "tool" or _is_context(message):
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
        parts = []
        if tool_results:
            parts.append(summarise(tool_results, names))
        parts.extend(_unmentioned_contexts(messages))
        if tool_choice == "required" and available:
            name = next(iter(available))
            return "Calling again. ", [
                (name, json.dumps(_Filler("").object(available[name].get("parameters") or {})))
            ]
        return " ".join(parts), []
    last_user = next((m for m in reversed(messages) if m.get("role") == "user"), None)
    text = _text_of(last_user) if last_user else ""
    # Background results no answer has mentioned yet are mentioned first.
    news = [line + " " for line in _unmentioned_contexts(messages[:-1])]
    calls = choose_calls(text, available, tool_choice)
    if calls:
        called = ", ".join(name for name, _ in calls)
        return "".join(news) + f"Calling {called}. ", calls
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
