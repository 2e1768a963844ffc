"""Which key and base a model call of a user's run goes out with.

The order, first match wins: an api_key the agent or the run sets in modelSettings (the
run loop keeps it); the user's own credential for the model's provider; a site-wide
credential; the server's environment (litellm reads OPENAI_API_KEY and the others itself).

What keeps a key where it belongs (the gate of providers/gate.py):
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

from providers.catalog import PROVIDERS, litellm_model, provider_of
from providers.gate import model_refusal
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


def model_call(*, user: Any, model: str, api_base: str = "") -> ModelCall:
    """How a call of `model` by `user` is made, through the gate (providers/gate.py);
    `api_base`: the base URL the agent, the run or the operator names for it (a site-wide
    key is then never used). A refused call carries its reason in `refusal`."""
    provider = provider_of(model)
    target = litellm_model(model)
    credential = None if provider == "studio" else credential_for(user=user, provider=provider)
    if credential is None or (credential.is_site and api_base):
        refusal = model_refusal(model, api_base=api_base)
        return ModelCall(model, target, refusal=refusal or "")
    label = f"{'site' if credential.is_site else 'own'}:{credential.name}"
    refusal = model_refusal(model, api_base=api_base or credential.api_base)
    if refusal:
        where = f"{label} api_base " if credential.api_base and not api_base else ""
        return ModelCall(model, target, credential=label, refusal=f"{where}{refusal}")
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
