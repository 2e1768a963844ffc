"""The model providers the studio knows how to configure: how litellm names each one, the
environment variable the server's own key comes from, and the model a connection test asks
for one token."""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Provider:
    id: str
    label: str
    litellm: str  # the provider prefix of litellm's model strings
    env_key: str  # where the server's key comes from ("" for none)
    test_model: str  # the model a connection test calls ("" when the user must name one)
    needs_base: bool = False  # calls go to a server somebody runs: the credential names it


PROVIDERS = {
    p.id: p
    for p in (
        Provider("openai", "OpenAI", "openai", "OPENAI_API_KEY", "gpt-4o-mini"),
        Provider("anthropic", "Anthropic", "anthropic", "ANTHROPIC_API_KEY", "claude-haiku-4-5"),
        Provider("gemini", "Google Gemini", "gemini", "GEMINI_API_KEY", "gemini-2.5-flash-lite"),
        Provider("mistral", "Mistral", "mistral", "MISTRAL_API_KEY", "mistral-small-latest"),
        Provider("groq", "Groq", "groq", "GROQ_API_KEY", "openai/gpt-oss-20b"),
        Provider(
            "openai_compatible", "OpenAI-compatible server", "openai", "", "", needs_base=True
        ),
    )
}
# Model-string prefixes that name a provider under another name: the Mastra reference
# writes Gemini models as google/..., litellm as gemini/...
ALIASES = {"google": "gemini"}


def provider_of(model: str) -> str:
    """The provider prefix of a model string, aliases resolved (`google/x` -> `gemini`)."""
    prefix = (model or "").split("/", 1)[0]
    return ALIASES.get(prefix, prefix)


def litellm_model(model: str) -> str:
    """The model string litellm takes: `google/gemini-2.5-flash` -> `gemini/gemini-2.5-flash`."""
    prefix, _, rest = (model or "").partition("/")
    return f"{ALIASES[prefix]}/{rest}" if prefix in ALIASES and rest else model


def server_key_configured(provider: Provider) -> bool:
    return bool(provider.env_key and os.environ.get(provider.env_key))


def server_key(model: str) -> str:
    """The server's own key for `model`'s provider (from its environment), or ""."""
    provider = PROVIDERS.get(provider_of(model))
    return os.environ.get(provider.env_key, "") if provider and provider.env_key else ""


MODEL_STRING = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]*/\S+$")
# How many models an agent or a run may list to fall back on.
MAX_FALLBACKS = 5


def valid_model_string(value: str) -> bool:
    """litellm model strings are `provider/model` (the model part may contain slashes)."""
    return bool(MODEL_STRING.match(value or ""))


def fallback_problems(value: Any, path: str = "$.fallbacks") -> list[str]:
    """Problems of a `fallbacks` option (models tried in order when the agent's model
    fails), each with its JSON path."""
    if value is None:
        return []
    if not isinstance(value, list) or len(value) > MAX_FALLBACKS:
        return [f"{path}: must be a list of at most {MAX_FALLBACKS} model strings"]
    return [
        f"{path}[{index}]: must be a model string provider/model"
        for index, model in enumerate(value)
        if not isinstance(model, str) or not valid_model_string(model) or "://" in model
    ]
