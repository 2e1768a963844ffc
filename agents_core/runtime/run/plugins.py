"""What other parts of the studio do at fixed points of every run: signals drains the
run's pending signals into the thread's memory before each model call, and takes up what
a run leaves (undrained and queued signals) when it ends, which may start the next run.

They are registered when the app is ready (agents_core.apps): the run loop calls them
without importing them, since they start runs themselves."""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

from agents_core.models import Run

logger = logging.getLogger(__name__)

_before_model_call: list[Callable[[Run], Any]] = []
_after_run: list[Callable[[Run], Any]] = []


def register(*, before_model_call: Callable[[Run], Any], after_run: Callable[[Run], Any]) -> None:
    if before_model_call not in _before_model_call:
        _before_model_call.append(before_model_call)
    if after_run not in _after_run:
        _after_run.append(after_run)


def before_model_call(run: Run) -> list[Any]:
    """What the registered functions drained into the run (signal ids), in order."""
    drained: list[Any] = []
    for fn in _before_model_call:
        drained += fn(run) or []
    return drained


def after_run(run: Run, status: str) -> None:
    """The run's final `status` is saved (and set on `run`, which is not read again); a
    failure here is logged: the run itself is over."""
    run.status = status
    try:
        for fn in _after_run:
            fn(run)
    except Exception:  # noqa: BLE001
        logger.exception("After-run work failed for run %s", run.pk)
