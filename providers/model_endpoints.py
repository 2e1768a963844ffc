"""Where an agent's model calls may be sent: the rules of providers/gate.py applied to
the fields of an agent and a run, each problem with the field and JSON path it comes from.

A base URL may be set in the agent's `metadata.api_base`, its
`default_options.modelSettings` or a run's `options.modelSettings`; it applies to every
model the run may call: the agent's model and each of its `fallbacks` (the agent's
default options or the run's), so each of those passes the gate with that base.

Only the keys of `providers.request.MODEL_SETTINGS` reach litellm from the options, so
`extra_headers`, `api_version`, `custom_llm_provider`, `base_url` (other than as a
spelling of `api_base`, see BASE_KEYS) and the rest of litellm's arguments cannot be set
by an agent or a run at all.

Every caller asks `model_config_problems` (or one of its two wrappers) and turns the
answer into its own error: a 400 with field errors at save time (REST, admin), a
DefinitionError for a code agent, a 400 at run start, a `run-error` with the code
`model_base_refused` in the run loop, which then never calls litellm.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from providers.gate import base_problem, model_problem

REFUSED_CODE = "model_base_refused"
# How an agent's metadata names its base, and how modelSettings may spell it.
METADATA_BASE_KEYS = ("api_base", "apiBase")
BASE_KEYS = ("api_base", "apiBase", "base_url", "baseURL", "baseUrl")


@dataclass(frozen=True)
class Problem:
    field: str  # "model", "metadata", "default_options" (the agent's) or "options" (a run's)
    path: str  # a JSON path inside that field, "$" for the field itself
    message: str

    def text(self) -> str:
        return self.message if self.path == "$" else f"{self.path}: {self.message}"


def _object(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _bases(metadata: Any, default_options: Any, run_options: Any) -> Iterator[tuple[str, str, Any]]:
    """(field, path, value) of every base URL the call reads, as providers.request.model_settings
    reads them: the metadata's, and the modelSettings that win (a run's replace the
    agent's)."""
    for key in METADATA_BASE_KEYS:
        if _object(metadata).get(key):
            yield "metadata", f"$.{key}", _object(metadata)[key]
    run_options = _object(run_options)
    field, options = (
        ("options", run_options)
        if "modelSettings" in run_options
        else ("default_options", _object(default_options))
    )
    model_settings = options.get("modelSettings")
    if model_settings is None:
        return
    if not isinstance(model_settings, dict):
        yield field, "$.modelSettings", model_settings
        return
    for key in BASE_KEYS:
        if model_settings.get(key):  # an empty base is no base: the provider's endpoint
            yield field, f"$.modelSettings.{key}", model_settings[key]


def call_base(*, metadata: Any, default_options: Any, run_options: Any) -> str:
    """The base URL the agent or the run names for its model calls ("" for none), as
    providers.request.model_settings reads it: the last one set wins."""
    bases = [value for _, path, value in _bases(metadata, default_options, run_options)]
    return next((value for value in reversed(bases) if isinstance(value, str)), "")


def _fallbacks(default_options: Any, run_options: Any) -> tuple[str, list[Any]]:
    """(field, models) of the fallbacks a run tries: the run's replace the agent's."""
    run_options = _object(run_options)
    if "fallbacks" in run_options:
        return "options", run_options["fallbacks"] or []
    return "default_options", _object(default_options).get("fallbacks") or []


def model_config_problems(
    *, model: str, metadata: Any = None, default_options: Any = None, run_options: Any = None
) -> list[Problem]:
    """Everything that keeps a call of `model` or of one of its fallbacks, configured so,
    from being made (the gate of providers/gate.py, field by field)."""
    problems = []
    bases = list(_bases(metadata, default_options, run_options))
    for field, path, value in bases:
        if path == "$.modelSettings":
            problems.append(Problem(field, path, "must be a JSON object"))
            continue
        message = base_problem(value)
        if message:
            problems.append(Problem(field, path, message))
    message = model_problem(model, has_base=bool(bases))
    if message:
        problems.append(Problem("model", "$", message))
    field, fallbacks = _fallbacks(default_options, run_options)
    for index, fallback in enumerate(fallbacks if isinstance(fallbacks, list) else []):
        message = model_problem(fallback, has_base=bool(bases))
        if message:
            problems.append(Problem(field, f"$.fallbacks[{index}]", message))
    return problems


def agent_model_errors(*, model: str, metadata: Any, default_options: Any) -> dict[str, list[str]]:
    """Save time: the problems of an agent's model configuration as field errors
    ({"metadata": ["$.api_base: ..."]}), empty when it may be saved."""
    errors: dict[str, list[str]] = {}
    for problem in model_config_problems(
        model=model, metadata=metadata, default_options=default_options
    ):
        errors.setdefault(problem.field, []).append(problem.text())
    return errors


def run_model_refusals(*, agent: Any, run_options: Any) -> list[dict[str, str]]:
    """Run start and run time: why the model call of a run of `agent` (its model, metadata
    and default options) with `run_options` may not be made, as errors with a path:
    `$.options...` for what the run was started with (the start request's body),
    `agent.<field>...` for what the agent is saved with. Empty when the call may go."""
    refusals = []
    for problem in model_config_problems(
        model=agent.model,
        metadata=agent.metadata,
        default_options=agent.default_options,
        run_options=run_options,
    ):
        where = "$.options" if problem.field == "options" else f"agent.{problem.field}"
        path = where + problem.path[1:]
        refusals.append({"path": path, "message": f"{path}: {problem.message}"})
    return refusals
