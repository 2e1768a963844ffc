"""The options a run is started with: what a caller may set, checked before any row of the
run is written (run_start, and a message queued to start a run later)."""

from __future__ import annotations

from typing import Any

from agents_core.runtime.execution.processes import uses_workers
from common.exceptions import ApplicationError
from providers.catalog import fallback_problems
from providers.model_endpoints import REFUSED_CODE, run_model_refusals
from providers.options import call_option_problems

# Per-run options a caller may set (hooks are Python callables and stay in memory).
RUN_OPTIONS = {
    "maxSteps",
    "toolChoice",
    "activeTools",
    "temperature",
    "modelSettings",
    "providerOptions",
    "autoResume",
    "fallbacks",
}


def _error(problem: str) -> dict[str, str]:
    """{"path", "message"} of a problem written "<path>: <message>"."""
    path, _, message = problem.partition(": ")
    return {"path": path, "message": message}


def _clean_options(options: dict[str, Any] | None) -> tuple[dict[str, Any], dict[str, Any]]:
    """(storable options, per-run Python hooks)."""
    options = dict(options or {})
    hooks = options.pop("hooks", None) or {}
    unknown = set(options) - RUN_OPTIONS
    if unknown:
        raise ApplicationError(
            f"Unknown run options: {sorted(unknown)}. Known: {sorted(RUN_OPTIONS)}.",
            code="invalid_options",
        )
    choice = options.get("toolChoice")
    if choice is not None and not isinstance(choice, str | dict):
        raise ApplicationError(
            "toolChoice must be auto, none, required or a tool name.", code="invalid_options"
        )
    active = options.get("activeTools")
    if active is not None and not (
        isinstance(active, list) and all(isinstance(name, str) for name in active)
    ):
        raise ApplicationError("activeTools must be a list of tool names.", code="invalid_options")
    steps = options.get("maxSteps")
    if steps is not None and not (isinstance(steps, int) and 1 <= steps <= 100):
        raise ApplicationError("maxSteps must be an integer from 1 to 100.", code="invalid_options")
    problems = call_option_problems(options.get("providerOptions"), "$.options.providerOptions")
    problems += fallback_problems(options.get("fallbacks"), "$.options.fallbacks")
    if problems:
        raise ApplicationError(
            problems[0],
            code="invalid_options",
            extra={"errors": [_error(problem) for problem in problems]},
        )
    unknown_hooks = set(hooks) - {"before_tool_call", "after_tool_call"}
    if unknown_hooks:
        raise ApplicationError(f"Unknown hooks: {sorted(unknown_hooks)}.", code="invalid_options")
    if hooks and uses_workers():
        raise ApplicationError(
            "Per-run Python hooks need STUDIO_RUN_EXECUTOR=inline: a run worker is another "
            "process and cannot receive functions. Declare the hooks on the agent instead.",
            code="invalid_options",
        )
    return options, hooks


def run_options_check(
    *, agent: Any, options: dict[str, Any] | None
) -> tuple[dict[str, Any], dict[str, Any]]:
    """(storable options, per-run Python hooks) of a run of `agent`; ApplicationError (400)
    for an unknown or malformed option, and for a model call the operator does not allow
    (code model_base_refused, with the path of each refused field)."""
    stored, hooks = _clean_options(options)
    refused = run_model_refusals(agent=agent, run_options=stored)
    if refused:
        raise ApplicationError(refused[0]["message"], code=REFUSED_CODE, extra={"errors": refused})
    return stored, hooks
