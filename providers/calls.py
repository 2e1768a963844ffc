"""litellm for the callers outside the run loop (a thread's title, a judge's verdict, a
credential's test, a run's price): imported when first asked for, since the import takes
seconds, with the studio's offline provider registered when the model is one of its
(`studio/...`). The run loop imports litellm in a thread instead (runtime/run/model_step.py)."""

from __future__ import annotations

import importlib
from types import ModuleType
from typing import Any

from providers.models_list import OFFLINE_PROVIDER


def litellm_for(model: str) -> ModuleType:
    """litellm, ready to call `model`."""
    if model.startswith(f"{OFFLINE_PROVIDER}/"):
        importlib.import_module("providers.offline")  # registers the offline provider
    return importlib.import_module("litellm")


def completion(**kwargs: Any) -> Any:
    """One model call, waited for: litellm's `completion` with `kwargs` as they are."""
    return litellm_for(kwargs["model"]).completion(**kwargs)
