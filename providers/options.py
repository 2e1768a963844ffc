"""providerOptions: what an agent, a run or an instruction asks of a provider, mapped to
the arguments litellm takes for it. Unknown providers and unknown options are refused with
the JSON path of the option (at save time a 400, at run start a 400, in a run a run-error),
never dropped.

Options are grouped by provider (`{"openai": {"reasoningEffort": "low"}}`); a call uses the
group of its model's provider and leaves the others (an agent whose fallbacks use another
provider carries options for both). An OpenAI-compatible server takes the `openai` group;
`google` and `gemini` name the same group.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from providers.catalog import provider_of

Check = Callable[[Any], str | None]  # a problem with a value, or None


def _one_of(*values: str) -> Check:
    return lambda v: None if v in values else f"must be one of {', '.join(values)}"


def _bool(value: Any) -> str | None:
    return None if isinstance(value, bool) else "must be true or false"


def _string(value: Any) -> str | None:
    return None if isinstance(value, str) and value else "must be a non-empty string"


def _positive_int(value: Any) -> str | None:
    ok = isinstance(value, int) and not isinstance(value, bool) and value > 0
    return None if ok else "must be a whole number above 0"


def _object(value: Any) -> str | None:
    return None if isinstance(value, dict) else "must be a JSON object"


def _cache_control(value: Any) -> str | None:
    if not isinstance(value, dict) or value.get("type") != "ephemeral":
        return 'must be {"type": "ephemeral"} (optionally with "ttl": "5m" or "1h")'
    if set(value) - {"type", "ttl"} or value.get("ttl", "5m") not in ("5m", "1h"):
        return 'takes only "type": "ephemeral" and "ttl": "5m" or "1h"'
    return None


def _thinking(value: Any) -> str | None:
    if not isinstance(value, dict) or value.get("type") not in ("enabled", "disabled"):
        return 'must be {"type": "enabled", "budgetTokens": N} or {"type": "disabled"}'
    if set(value) - {"type", "budgetTokens"}:
        return 'takes only "type" and "budgetTokens"'
    if value["type"] == "enabled":
        return _positive_int(value.get("budgetTokens"))
    return None


def _safety_settings(value: Any) -> str | None:
    ok = isinstance(value, list) and all(
        isinstance(item, dict)
        and set(item) == {"category", "threshold"}
        and all(isinstance(v, str) for v in item.values())
        for item in value
    )
    return None if ok else 'must be a list of {"category": ..., "threshold": ...}'


def _thinking_arg(value: dict[str, Any]) -> dict[str, Any]:
    if value["type"] == "disabled":
        return {"type": "disabled"}
    return {"type": "enabled", "budget_tokens": value["budgetTokens"]}


def _same(value: Any) -> Any:
    return value


EFFORT = _one_of("minimal", "low", "medium", "high")
# provider group -> option -> (litellm argument, check, conversion)
CALL_OPTIONS: dict[str, dict[str, tuple[str, Check, Callable[[Any], Any]]]] = {
    "openai": {
        "reasoningEffort": ("reasoning_effort", EFFORT, _same),
        "maxCompletionTokens": ("max_completion_tokens", _positive_int, _same),
        "parallelToolCalls": ("parallel_tool_calls", _bool, _same),
        "user": ("user", _string, _same),
        "serviceTier": ("service_tier", _one_of("auto", "default", "flex", "priority"), _same),
        "store": ("store", _bool, _same),
        "metadata": ("metadata", _object, _same),
    },
    "anthropic": {
        "thinking": ("thinking", _thinking, _thinking_arg),
        "reasoningEffort": ("reasoning_effort", EFFORT, _same),
    },
    "gemini": {
        "safetySettings": ("safety_settings", _safety_settings, _same),
        "reasoningEffort": ("reasoning_effort", EFFORT, _same),
    },
    "mistral": {
        "safePrompt": ("safe_prompt", _bool, _same),
        "parallelToolCalls": ("parallel_tool_calls", _bool, _same),
    },
    "groq": {
        "reasoningEffort": (
            "reasoning_effort",
            _one_of("none", "default", "low", "medium", "high"),
            _same,
        ),
        "reasoningFormat": ("reasoning_format", _one_of("parsed", "raw", "hidden"), _same),
        "parallelToolCalls": ("parallel_tool_calls", _bool, _same),
        "user": ("user", _string, _same),
    },
    # The offline provider (providers/offline.py): its arguments as they are.
    "studio": {
        "delay": ("delay", lambda v: None, _same),
        "chunk_size": ("chunk_size", lambda v: None, _same),
        "stamp": ("stamp", lambda v: None, _same),
        "fail": ("fail", lambda v: None, _same),
    },
}
# What an instruction (a system message) may carry: anthropic's cache breakpoint.
MESSAGE_OPTIONS: dict[str, dict[str, Check]] = {"anthropic": {"cacheControl": _cache_control}}
GROUP_ALIASES = {"google": "gemini"}


def _group(name: str) -> str:
    return GROUP_ALIASES.get(name, name)


def _problems(value: Any, path: str, table: dict[str, dict[str, Any]]) -> list[str]:
    if value is None:
        return []
    if not isinstance(value, dict):
        return [f"{path}: must be a JSON object of provider groups"]
    problems = []
    for name, group in value.items():
        where = f"{path}.{name}"
        options = table.get(_group(name))
        if options is None:
            known = sorted({*table, *(a for a, g in GROUP_ALIASES.items() if g in table)})
            problems.append(f"{where}: unknown provider; options here go to {', '.join(known)}")
            continue
        if not isinstance(group, dict):
            problems.append(f"{where}: must be a JSON object")
            continue
        for key, option in group.items():
            entry = options.get(key)
            if entry is None:
                problems.append(
                    f"{where}.{key}: unknown option for {name}; known: {', '.join(sorted(options))}"
                )
                continue
            check = entry[1] if isinstance(entry, tuple) else entry
            problem = check(option)
            if problem:
                problems.append(f"{where}.{key}: {problem}")
    return problems


def call_option_problems(value: Any, path: str = "$.providerOptions") -> list[str]:
    """Problems of an agent's or a run's providerOptions, each with its JSON path."""
    return _problems(value, path, CALL_OPTIONS)


def message_option_problems(value: Any, path: str) -> list[str]:
    """Problems of an instruction's providerOptions."""
    return _problems(value, path, MESSAGE_OPTIONS)


def call_kwargs(value: Any, model: str) -> dict[str, Any]:
    """litellm's arguments for a call of `model` (litellm's model string: an
    OpenAI-compatible server's models are openai/... there) from providerOptions, checked
    first: ValueError with every problem."""
    problems = call_option_problems(value)
    if problems:
        raise ValueError("; ".join(problems))
    wanted = provider_of(model)
    out: dict[str, Any] = {}
    for name, group in (value or {}).items():
        if _group(name) != wanted:
            continue
        for key, option in group.items():
            argument, _, convert = CALL_OPTIONS[wanted][key]
            out[argument] = convert(option)
    return out


def message_cache_control(value: Any, model: str) -> dict[str, Any] | None:
    """The cache_control an instruction's content block gets for a call of `model`
    (litellm's model string)."""
    if provider_of(model) != "anthropic":
        return None
    return ((value or {}).get("anthropic") or {}).get("cacheControl")
