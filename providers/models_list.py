"""The models the picker offers: litellm's own price and context-window list, read from the
JSON file litellm ships (so the list needs no network and no `import litellm`, which costs
seconds)."""

from __future__ import annotations

import importlib.util
import json
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

from providers.catalog import PROVIDERS

MAP_FILE = "model_prices_and_context_window_backup.json"
# litellm's provider names for the catalog's providers.
CATALOG_LITELLM = {p.litellm: p.id for p in PROVIDERS.values() if not p.needs_base}
LIMIT_MAX = 200
# The studio's offline model (providers/offline.py): not in litellm's file, called
# with no key, listed first so that a user with no provider set up finds it.
OFFLINE_PROVIDER = "studio"


@dataclass(frozen=True)
class ModelInfo:
    model: str  # the studio's model string, provider/model
    provider: str  # catalog id
    context_window: int | None
    max_output_tokens: int | None
    input_cost_per_million: float | None
    output_cost_per_million: float | None

    def as_dict(self) -> dict[str, Any]:
        return self.__dict__.copy()


OFFLINE_MODELS = (
    ModelInfo(
        model=f"{OFFLINE_PROVIDER}/scripted",
        provider=OFFLINE_PROVIDER,
        context_window=None,
        max_output_tokens=None,
        input_cost_per_million=0.0,
        output_cost_per_million=0.0,
    ),
)


@cache
def _raw_map() -> dict[str, Any]:
    spec = importlib.util.find_spec("litellm")
    if spec is None or not spec.submodule_search_locations:
        return {}
    path = Path(next(iter(spec.submodule_search_locations))) / MAP_FILE
    try:
        return json.loads(path.read_text())
    except (OSError, ValueError):
        return {}


def _int(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _per_million(value: Any) -> float | None:
    if isinstance(value, int | float) and not isinstance(value, bool):
        return round(value * 1_000_000, 6)
    return None


@cache
def litellm_providers() -> frozenset[str]:
    """Every provider name litellm's list mentions."""
    return frozenset(
        entry["litellm_provider"]
        for entry in _raw_map().values()
        if isinstance(entry, dict) and isinstance(entry.get("litellm_provider"), str)
    )


@cache
def chat_models() -> tuple[ModelInfo, ...]:
    """The offline model, then the chat models of the catalog's providers, sorted by
    provider then name."""
    out = []
    for key, entry in _raw_map().items():
        if not isinstance(entry, dict) or entry.get("mode") != "chat":
            continue
        provider = CATALOG_LITELLM.get(str(entry.get("litellm_provider")))
        if provider is None:
            continue
        name = key.split("/", 1)[1] if key.startswith(f"{entry['litellm_provider']}/") else key
        out.append(
            ModelInfo(
                model=f"{provider}/{name}",
                provider=provider,
                context_window=_int(entry.get("max_input_tokens")),
                max_output_tokens=_int(entry.get("max_output_tokens")),
                input_cost_per_million=_per_million(entry.get("input_cost_per_token")),
                output_cost_per_million=_per_million(entry.get("output_cost_per_token")),
            )
        )
    return (*OFFLINE_MODELS, *sorted(out, key=lambda m: (m.provider, m.model)))


def model_search(
    *, search: str = "", providers: set[str] | None = None, limit: int = 50
) -> list[ModelInfo]:
    """Models whose string contains every word of `search` (case-insensitive), of the
    given providers (all when None)."""
    words = search.lower().split()
    found = []
    for info in chat_models():
        if providers is not None and info.provider not in providers:
            continue
        if all(word in info.model.lower() for word in words):
            found.append(info)
            if len(found) >= limit:
                break
    return found


def model_info(model: str) -> ModelInfo | None:
    return next((m for m in chat_models() if m.model == model), None)
