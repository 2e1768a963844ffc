"""Which model string, key and base a user's model call gets: `google/...` is litellm's
Gemini provider, a user's own credential before a site-wide one, none of another user's."""

from __future__ import annotations

import pytest

from providers.resolve import model_call
from providers.services import credential_create

pytestmark = pytest.mark.django_db


def test_google_models_are_called_as_litellms_gemini_with_the_gemini_key(owner):
    assert model_call(user=owner, model="google/gemini-2.5-flash").model == (
        "gemini/gemini-2.5-flash"
    )
    credential_create(owner=owner, provider="gemini", api_key="gemini-own-key-0001")

    call = model_call(user=owner, model="google/gemini-2.5-flash")

    assert (call.model, call.api_key, call.credential) == (
        "gemini/gemini-2.5-flash",
        "gemini-own-key-0001",
        "own:gemini",
    )


def test_a_users_own_key_comes_before_the_site_wide_one(owner, outsider):
    credential_create(owner=None, provider="mistral", api_key="site-key-00000001")
    credential_create(owner=owner, provider="mistral", api_key="own-key-000000002")

    mine = model_call(user=owner, model="mistral/mistral-small-latest")
    theirs = model_call(user=outsider, model="mistral/mistral-small-latest")

    assert (mine.api_key, mine.credential) == ("own-key-000000002", "own:mistral")
    assert (theirs.api_key, theirs.credential) == ("site-key-00000001", "site:mistral")


def test_without_any_credential_the_call_is_left_to_the_environment(owner, outsider):
    credential_create(owner=outsider, provider="groq", api_key="outsider-key-0001")

    call = model_call(user=owner, model="groq/openai/gpt-oss-20b")

    assert (call.model, call.api_key, call.api_base, call.credential) == (
        "groq/openai/gpt-oss-20b",
        "",
        "",
        "",
    )
