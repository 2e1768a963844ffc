"""The one gate every model call of the studio passes: where a call may be sent.

litellm sends a call to the `api_base` it is given, with the provider's key from the
server's environment (`openai/...` carries OPENAI_API_KEY), and a provider with no
endpoint of its own (Ollama, vLLM, llamafile...) to a local default such as
`http://localhost:11434`. So a model string or a base URL that a user could choose freely
would make the server POST to an address of their choosing, with its keys. The rules:

- a model string is `provider/model` and cannot carry an address
  (`huggingface/https://...` would send the Hugging Face key there);
- a call without a base goes to its provider's own endpoint: litellm's default for the
  provider, or the endpoint the operator set in the provider's environment
  (OPENAI_BASE_URL, AZURE_API_BASE, ...);
- a base URL, wherever it comes from, must be one of the operator's
  `settings.STUDIO_MODEL_API_BASES`, compared by scheme, host and port (the path is
  free: `http://127.0.0.1:11434/v1` matches the entry `http://127.0.0.1:11434`);
- a provider whose endpoint is a server somebody runs has no endpoint of its own: it
  needs such a listed base.

`model_refusal` applies them all to one call. Every call site asks it right before litellm
is called (the agent's model and its fallbacks, judges, embeddings, re-ranking, thread
titles, the provider's web search, a credential's connection test), and every place a
model string is saved asks it too, so that a refusal at save time is a 400 naming the
field and one at call time is an error of the run, the suite or the search: never a
request sent.
"""

from __future__ import annotations

import re
from functools import lru_cache
from typing import Any
from urllib.parse import urlsplit

from django.conf import settings
from django.core.exceptions import ImproperlyConfigured

from providers.catalog import valid_model_string

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
ALLOWED_HINT = "the operator lists the model servers the studio may call in STUDIO_MODEL_API_BASES"


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
        return f"{origin} is not a model server this studio may call ({ALLOWED_HINT})"
    return None


def model_problem(model: Any, *, has_base: bool) -> str | None:
    """Why the model string `model` may not be called (with a base URL or without), or
    None: the rules of the model string alone, its base checked by `base_problem`."""
    if not isinstance(model, str) or not valid_model_string(model):
        return f"{model!r} is not a model string provider/model"
    if "://" in model:
        return "a model string cannot name an address; set api_base instead"
    provider = model.split("/", 1)[0]
    if provider in SELF_HOSTED_PROVIDERS and not has_base:
        return (
            f"{provider}/ models call a server somebody runs, not a provider's own "
            f"service: set api_base to that server ({ALLOWED_HINT})"
        )
    return None


def model_refusal(model: Any, *, api_base: Any = "") -> str | None:
    """The gate: why a call of `model` sent to `api_base` ("": the provider's own
    endpoint) may not be made, or None when it may."""
    if api_base and (problem := base_problem(api_base)):
        return problem
    return model_problem(model, has_base=bool(api_base))


def model_field_errors(model: Any, path: str, *, api_base: Any = "") -> list[dict[str, str]]:
    """Save time: the gate's refusal of a model field as errors with the field's JSON path
    ([] when the model may be called)."""
    refusal = model_refusal(model, api_base=api_base)
    return [{"path": path, "message": refusal}] if refusal else []
