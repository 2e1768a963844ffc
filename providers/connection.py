"""Test connection: a one-token call through litellm with a stored credential, answered
with the provider's words or its error (the key is never part of either)."""

from __future__ import annotations

from typing import Any

from django.conf import settings

from providers.calls import completion
from providers.catalog import PROVIDERS
from providers.errors import model_error
from providers.gate import model_refusal
from providers.models import ProviderCredential
from providers.resolve import NO_KEY
from providers.services import credential_key, invalid
from tools_app.crypto import CredentialsUnavailable
from tools_app.redaction import secrets_scope


def _target(credential: ProviderCredential, model: str) -> str:
    spec = PROVIDERS[credential.provider]
    model = model or spec.test_model
    if not model:
        raise invalid("$.model", "name a model this server serves")
    for prefix in {spec.litellm, credential.name, credential.provider}:
        model = model.removeprefix(f"{prefix}/")
    return f"{spec.litellm}/{model}"


def credential_test(*, credential: ProviderCredential, model: str = "") -> dict[str, Any]:
    """{"ok": True, "model", "answer"} or {"ok": False, "model", "code", "error"}; the key
    is redacted from the error as a run's are (tools_app.redaction: decrypting it records
    it in this call's scope, model_error takes it out)."""
    with secrets_scope():
        return _credential_test(credential, model)


def _credential_test(credential: ProviderCredential, model: str) -> dict[str, Any]:
    target = _target(credential, model)
    if problem := model_refusal(target, api_base=credential.api_base):
        return {"ok": False, "model": target, "code": "model_base_refused", "error": problem}
    try:
        key = credential_key(credential)
    except CredentialsUnavailable as exc:
        return {"ok": False, "model": target, "code": exc.code, "error": exc.message}
    kwargs: dict[str, Any] = {
        "model": target,
        "messages": [{"role": "user", "content": "Reply with one word: OK"}],
        "max_tokens": 1,
        "api_key": key or NO_KEY,
        "timeout": settings.STUDIO_PROVIDER_TEST_TIMEOUT,
        "num_retries": 0,
        "max_retries": 0,
    }
    if credential.api_base:
        kwargs["api_base"] = credential.api_base
    try:
        response = completion(**kwargs)
    except Exception as exc:  # noqa: BLE001 - every provider failure is the answer shown
        error = model_error(exc, target)
        return {"ok": False, "model": target, "code": error.code, "error": error.message}
    answer = response.choices[0].message.content if response.choices else ""
    return {"ok": True, "model": target, "answer": answer or ""}
