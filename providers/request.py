"""litellm's arguments for a run's model call besides the messages: the model settings the
agent's options and the run's may set (MODEL_SETTINGS, in either spelling), the base the
agent's metadata names, the providerOptions for the call's provider, the credential's key
and base, and the gate once more on exactly what litellm is about to be given. A call that
may not be made raises ModelError before anything is sent."""

from __future__ import annotations

from typing import Any

from providers.catalog import fallback_problems
from providers.errors import ModelError
from providers.gate import model_refusal
from providers.model_endpoints import (
    BASE_KEYS,
    METADATA_BASE_KEYS,
    REFUSED_CODE,
    run_model_refusals,
)
from providers.options import call_kwargs
from providers.resolve import ModelCall

# litellm arguments an agent's default options or a run may set (modelSettings); nothing
# else of what litellm takes (headers, provider, api_version...) can be set that way.
MODEL_SETTINGS = {
    "temperature",
    "max_tokens",
    "top_p",
    "seed",
    "stop",
    "timeout",
    "api_base",
    "api_key",
    "frequency_penalty",
    "presence_penalty",
    "num_retries",
}
_CAMEL = {
    **{key: "api_base" for key in BASE_KEYS},
    "maxTokens": "max_tokens",
    "topP": "top_p",
    "apiKey": "api_key",
    "frequencyPenalty": "frequency_penalty",
    "presencePenalty": "presence_penalty",
    "numRetries": "num_retries",
}
OPTIONS_REFUSED = "provider_options_refused"


def model_settings(
    *, agent: Any, options: dict[str, Any], run_options: Any, call: ModelCall | None
) -> dict[str, Any]:
    """litellm's arguments besides the messages, for `call` (`agent`'s model when None),
    under the run's merged `options` and the options it was started with (`run_options`).
    A base URL the operator does not allow ends the run here (ModelError), before any call
    is made."""
    problems = fallback_problems(options.get("fallbacks"))
    if problems:
        raise ModelError(f"The model call was not made: {'; '.join(problems)}", "invalid_options")
    refusals = run_model_refusals(agent=agent, run_options=run_options)
    if call is not None and call.refusal and not refusals:
        refusals.append({"message": f"{call.requested}: {call.refusal}"})
    if refusals:
        text = "; ".join(refusal["message"] for refusal in refusals)
        raise ModelError(f"The model call was not made: {text}", REFUSED_CODE)
    settings: dict[str, Any] = {}
    metadata = agent.metadata or {}
    for key in METADATA_BASE_KEYS:
        if metadata.get(key):
            settings["api_base"] = metadata[key]
    if "temperature" in options:
        settings["temperature"] = options["temperature"]
    for key, value in (options.get("modelSettings") or {}).items():
        key = _CAMEL.get(key, key)
        if key in MODEL_SETTINGS and (value or key != "api_base"):
            settings[key] = value
    model = call.model if call is not None else agent.model
    try:
        settings.update(call_kwargs(options.get("providerOptions"), model))
    except ValueError as exc:
        raise ModelError(f"The model call was not made: {exc}", OPTIONS_REFUSED) from None
    if call is not None:
        # A key or base the agent or the run sets wins over the credential's.
        if call.api_key and not settings.get("api_key"):
            settings["api_key"] = call.api_key
        if call.api_base and not settings.get("api_base"):
            settings["api_base"] = call.api_base
    # The gate once more, on exactly what litellm is about to be given.
    requested = call.requested if call is not None else agent.model
    refusal = model_refusal(requested, api_base=settings.get("api_base", ""))
    if refusal:
        raise ModelError(f"The model call was not made: {requested}: {refusal}", REFUSED_CODE)
    return settings
