"""GET /api/models: litellm's local list of chat models for the picker, with provider,
context window and price, and whether the user has a key for the provider."""

from __future__ import annotations

import pytest

from providers.services import credential_create

pytestmark = pytest.mark.django_db


def test_a_search_finds_models_with_their_context_window_and_price(api):
    body = api.get("/api/models", {"search": "gpt-4o-mini"}).json()

    found = {m["model"]: m for m in body["results"]}
    model = found["openai/gpt-4o-mini"]
    assert model["provider"] == "openai"
    assert model["context_window"] == 128000
    assert model["input_cost_per_million"] == 0.15
    assert model["output_cost_per_million"] == 0.6
    assert all("gpt-4o-mini" in name for name in found)


def test_every_word_must_match_and_a_provider_narrows_the_list(api):
    results = api.get("/api/models", {"search": "claude sonnet", "limit": 200}).json()["results"]
    assert results and all(m["provider"] == "anthropic" and "sonnet" in m["model"] for m in results)
    gemini = api.get("/api/models", {"provider": "gemini", "limit": 5}).json()["results"]
    assert len(gemini) == 5 and all(m["model"].startswith("gemini/") for m in gemini)


def test_models_of_a_provider_the_user_has_a_key_for_are_usable(api, owner, monkeypatch):
    monkeypatch.delenv("MISTRAL_API_KEY", raising=False)
    before = api.get("/api/models", {"provider": "mistral", "limit": 1}).json()["results"]
    assert before[0]["usable"] is False
    credential_create(owner=owner, provider="mistral", api_key="mistral-key-123456")

    after = api.get("/api/models", {"provider": "mistral", "limit": 1}).json()["results"]

    assert after[0]["usable"] is True


def test_a_limit_that_is_not_a_number_is_a_400(api):
    response = api.get("/api/models", {"limit": "many"})
    assert response.status_code == 400 and response.json()["code"] == "invalid"


def test_the_offline_model_comes_first_and_needs_no_key(api):
    first = api.get("/api/models", {"limit": 1}).json()["results"]
    found = api.get("/api/models", {"search": "scripted"}).json()["results"]

    assert [m["model"] for m in first] == ["studio/scripted"]
    assert found[0] == {**found[0], "model": "studio/scripted", "usable": True}
