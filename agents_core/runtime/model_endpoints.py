"""Where a model call may be sent: the operator decides, never an agent or a run.

litellm sends a call to the `api_base` it is given, with the provider's key from the
server's environment (`openai/...` carries OPENAI_API_KEY). So a base URL that an agent or
a run could choose freely would receive the server's keys, and would let any signed-in
user make the server POST to an address of their choosing. The rules:

- a model call without a base goes to its provider's own endpoint: litellm's default for
  the provider, or the endpoint the operator set in the provider's environment
  (OPENAI_BASE_URL, AZURE_API_BASE, ...);
- a base URL, wherever it is set (the agent's `metadata.api_base`, its
  `default_options.modelSettings`, a run's `options.modelSettings`), must be one of the
  operator's `settings.STUDIO_MODEL_API_BASES`, compared by scheme, host and port (the
  path is free: `http://127.0.0.1:11434/v1` matches the entry `http://127.0.0.1:11434`);
- a provider whose endpoint is a server somebody runs (Ollama, vLLM, llamafile, an
  OpenAI-compatible proxy...) has no endpoint of its own: it needs such a listed base;
- a model string cannot carry an address (`huggingface/https://...` would send the
  Hugging Face key there): give the address as a base instead.

Only the keys of `runtime.setup.MODEL_SETTINGS` reach litellm from the options, so
`extra_headers`, `api_version`, `custom_llm_provider`, `base_url` (other than as a
spelling of `api_base`, see BASE_KEYS) and the rest of litellm's arguments cannot be set
by an agent or a run at all.

Every caller asks `model_config_problems` (or one of its two wrappers) and turns the
answer into its own error: a 400 with field errors at save time (REST, admin), a
DefinitionError for a code agent, a 400 at run start, a `run-error` with the code
`model_base_refused` in the run loop, which then never calls litellm.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from functools import lru_cache
from typing import Any
from urllib.parse import urlsplit

from django.conf import settings
from django.core.exceptions import ImproperlyConfigured

REFUSED_CODE = "model_base_refused"
# How an agent's metadata names its base, and how modelSettings may spell it.
METADATA_BASE_KEYS = ("api_base", "apiBase")
BASE_KEYS = ("api_base", "apiBase", "base_url", "baseURL", "baseUrl")
# Providers whose endpoint is a server somebody runs, not the provider's own service:
# litellm sends their calls to a local default (Ollama: localhost:11434, llamafile:
# 127.0.0.1:8080, ...) or to whatever base it is given.
SELF_HOSTED_PROVIDERS = frozenset(
    {
        "custom",
        "custom_openai",
        "docker_model_runner",
        "hosted_vllm",
        "langflow",
        "langgraph",
        "lemonade",
        "litellm_proxy",
        "llamafile",
        "lm_studio",
        "ollama",
        "ollama_chat",
        "oobabooga",
        "openai_like",
        "petals",
        "triton",
        "vllm",
        "xinference",
    }
)
DEFAULT_PORTS = {"http": 80, "https": 443}
_FORBIDDEN = re.compile(r"[\x00-\x20\x7f\\]")
_ALLOWED_HINT = "the operator lists the model servers the studio may call in STUDIO_MODEL_API_BASES"


@dataclass(frozen=True)
class Problem:
    field: str  # "model", "metadata", "default_options" (the agent's) or "options" (a run's)
    path: str  # a JSON path inside that field, "$" for the field itself
    message: str

    def text(self) -> str:
        return self.message if self.path == "$" else f"{self.path}: {self.message}"


def base_origin(url: Any) -> str:
    """`scheme://host:port` of a base URL, the default port written out; ValueError with
    the reason when it is not an http(s) URL the comparison can trust."""
    if not isinstance(url, str) or not url.strip():
        raise ValueError("must be an http:// or https:// URL")
    if _FORBIDDEN.search(url):
        raise ValueError("must not contain spaces, control characters or backslashes")
    if not url.isascii():
        raise ValueError("must be ASCII (write an international host name in its xn-- form)")
    parts = urlsplit(url)
    scheme = parts.scheme.lower()
    if scheme not in DEFAULT_PORTS:
        raise ValueError("must be an http:// or https:// URL")
    if "@" in parts.netloc:
        raise ValueError("must not carry a user name or password")
    if parts.query or parts.fragment or url.endswith(("?", "#")):
        raise ValueError("must not have a query or a fragment")
    host = parts.hostname or ""
    if not host:
        raise ValueError("has no host")
    try:
        port = parts.port
    except ValueError:
        raise ValueError("has an invalid port") from None
    if port is None:
        port = DEFAULT_PORTS[scheme]
    if ":" in host:
        host = f"[{host}]"
    return f"{scheme}://{host}:{port}"


@lru_cache(maxsize=8)
def _origins(entries: tuple[str, ...]) -> frozenset[str]:
    origins = set()
    for entry in entries:
        try:
            origin = base_origin(entry)
        except ValueError as exc:
            raise ImproperlyConfigured(f"STUDIO_MODEL_API_BASES: {entry!r} {exc}") from None
        if urlsplit(entry).path not in ("", "/"):
            raise ImproperlyConfigured(
                f"STUDIO_MODEL_API_BASES: {entry!r} has a path; list servers as "
                "scheme://host:port (any path on a listed server is allowed)"
            )
        origins.add(origin)
    return frozenset(origins)


def allowed_origins() -> frozenset[str]:
    """The operator's list, normalised; ImproperlyConfigured names a bad entry."""
    return _origins(tuple(settings.STUDIO_MODEL_API_BASES))


def base_problem(value: Any) -> str | None:
    """Why a call may not go to the base URL `value`, or None when it may."""
    try:
        origin = base_origin(value)
    except ValueError as exc:
        return f"{value!r} {exc}"
    if origin not in allowed_origins():
        return f"{origin} is not a model server this studio may call ({_ALLOWED_HINT})"
    return None


def _object(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _bases(metadata: Any, default_options: Any, run_options: Any) -> Iterator[tuple[str, str, Any]]:
    """(field, path, value) of every base URL the call reads, as RunSetup.model_kwargs
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


def sets_base(*, metadata: Any, default_options: Any, run_options: Any) -> bool:
    """Does the agent or the run name a base URL for its model calls?"""
    return any(True for _ in _bases(metadata, default_options, run_options))


def model_config_problems(
    *, model: str, metadata: Any = None, default_options: Any = None, run_options: Any = None
) -> list[Problem]:
    """Everything that keeps a call of `model`, configured so, from being made."""
    problems = []
    if "://" in (model or ""):
        problems.append(
            Problem("model", "$", "a model string cannot name an address; set api_base instead")
        )
    bases = list(_bases(metadata, default_options, run_options))
    for field, path, value in bases:
        if path == "$.modelSettings":
            problems.append(Problem(field, path, "must be a JSON object"))
            continue
        message = base_problem(value)
        if message:
            problems.append(Problem(field, path, message))
    provider = (model or "").split("/", 1)[0]
    if provider in SELF_HOSTED_PROVIDERS and not bases:
        problems.append(
            Problem(
                "model",
                "$",
                f"{provider}/ models call a server somebody runs, not a provider's own "
                f"service: set api_base to that server ({_ALLOWED_HINT})",
            )
        )
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
