"""Which key and base a model call of a user's run goes out with.

The order, first match wins: an api_key the agent or the run sets in modelSettings (the
run loop keeps it); the user's own credential for the model's provider; a site-wide
credential; the server's environment (litellm reads OPENAI_API_KEY and the others itself).

What keeps a key where it belongs (the rules of agents_core/runtime/model_endpoints.py):
- a user's own key goes to the provider's endpoint, to the base of their credential, or to
  a base their agent or run sets; every base is on the operator's STUDIO_MODEL_API_BASES;
- a site-wide credential is used only when the agent and the run set no base, so its key
  goes only to the base an admin gave it (or the provider's own endpoint);
- an OpenAI-compatible server's models are written `<credential name>/<model>` and are
  called as `openai/<model>` at that credential's base.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from agents_core.runtime.model_endpoints import base_problem
from providers.catalog import PROVIDERS, litellm_model, provider_of
from providers.selectors import credential_for
from providers.services import credential_key
from tools_app.crypto import CredentialsUnavailable

NO_KEY = "no-key"


@dataclass(frozen=True)
class ModelCall:
    requested: str  # the model string as the agent writes it
    model: str  # the one litellm is given
    api_key: str = ""
    api_base: str = ""
    credential: str = ""  # "own:<name>" | "site:<name>" | "" (the server's environment)
    refusal: str = ""  # why the call may not be made ("" when it may)


def model_call(*, user: Any, model: str, base_set: bool) -> ModelCall:
    """How a call of `model` by `user` is made; `base_set`: the agent or the run names a
    base URL (a site-wide key is then never used)."""
    provider = provider_of(model)
    target = litellm_model(model)
    if provider == "studio":
        return ModelCall(model, target)
    credential = credential_for(user=user, provider=provider)
    if credential is None or (credential.is_site and base_set):
        return ModelCall(model, target)
    label = f"{'site' if credential.is_site else 'own'}:{credential.name}"
    if credential.api_base:
        problem = base_problem(credential.api_base)
        if problem:
            return ModelCall(model, target, credential=label, refusal=f"{label} api_base {problem}")
    if PROVIDERS[credential.provider].needs_base:
        target = "openai/" + model.split("/", 1)[1]
    try:
        key = credential_key(credential)
    except CredentialsUnavailable as exc:
        return ModelCall(model, target, credential=label, refusal=exc.message)
    if not key and PROVIDERS[credential.provider].needs_base:
        # A server that takes no key still gets one: left empty, litellm would send the
        # server's OPENAI_API_KEY to the user's base.
        key = NO_KEY
    return ModelCall(model, target, key, credential.api_base, label)
