"""Model fallbacks: a model that answers 429 or a 5xx is retried a bounded number of times,
then the next model of `fallbacks` is tried; the model that answered is kept on the run and
sent with run-finish. Checked on what local OpenAI- and Anthropic-protocol servers receive."""

from __future__ import annotations

import pytest
from channels.db import database_sync_to_async

from tests.agents_core.runtime.conftest import run_to_end
from tests.model_servers import Reply

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture(autouse=True)
def quick_retries(settings):
    settings.STUDIO_MODEL_RETRIES = 1
    settings.STUDIO_MODEL_RETRY_BACKOFF = 0.01


@database_sync_to_async
def _setup(owner, model, fallbacks, credentials):
    from agents_core.models import Agent
    from agents_core.services.threads import thread_create
    from providers.services import credential_create

    for provider, key, base in credentials:
        credential_create(owner=owner, provider=provider, api_key=key, api_base=base)
    agent = Agent.objects.create(
        slug="falls",
        name="Falls",
        model=model,
        owner=owner,
        default_options={"fallbacks": fallbacks},
    )
    return thread_create(user=owner, agent=agent)


async def _openai_then_claude(owner, openai_server, anthropic_server):
    """An agent on openai/gpt-4o-mini falling back to anthropic/claude-haiku-4-5, with the
    owner's keys for both local servers."""
    return await _setup(
        owner,
        "openai/gpt-4o-mini",
        ["anthropic/claude-haiku-4-5"],
        [("openai", "sk-good", openai_server.url), ("anthropic", "ant-good", anthropic_server.url)],
    )


async def test_a_rate_limited_model_falls_back_to_the_next(
    synced, owner, openai_server, anthropic_server
):
    openai_server.script = [Reply(status=429)]
    anthropic_server.script = [Reply(text="From Claude.")]
    thread = await _openai_then_claude(owner, openai_server, anthropic_server)

    run, events = await run_to_end(thread, "hello", owner)

    assert run.status == "completed", run.error
    # One try and one retry of the first model, then the fallback.
    assert [r.body["model"] for r in openai_server.requests] == ["gpt-4o-mini"] * 2
    [answered] = anthropic_server.requests
    assert answered.body["model"] == "claude-haiku-4-5"
    assert answered.body["messages"][-1]["content"][0]["text"] == "hello"
    assert run.model == "anthropic/claude-haiku-4-5"
    assert events[-1]["type"] == "run-finish"
    assert events[-1]["model"] == "anthropic/claude-haiku-4-5"
    assert events[-1]["text"].strip() == "From Claude."


async def test_a_retry_that_succeeds_keeps_the_agents_model(synced, owner, openai_server):
    openai_server.script = [Reply(status=503, error="overloaded"), Reply(text="Fine.")]
    thread = await _setup(
        owner, "openai/gpt-4o-mini", [], [("openai", "sk-good", openai_server.url)]
    )

    run, events = await run_to_end(thread, "hello", owner)

    assert run.status == "completed", run.error
    assert len(openai_server.requests) == 2
    assert run.model == "openai/gpt-4o-mini" and events[-1]["model"] == run.model


async def test_a_bad_key_is_not_retried_nor_passed_to_a_fallback(
    synced, owner, openai_server, anthropic_server
):
    openai_server.key = "sk-another"  # the owner's key is refused
    thread = await _openai_then_claude(owner, openai_server, anthropic_server)

    run, events = await run_to_end(thread, "hello", owner)

    assert run.status == "failed" and events[-1]["code"] == "auth"
    assert len(openai_server.requests) == 1
    assert anthropic_server.requests == []


async def test_when_every_model_fails_the_error_names_them(
    synced, owner, openai_server, anthropic_server
):
    openai_server.script = [Reply(status=429)]
    anthropic_server.script = [Reply(status=529, error="Overloaded")]
    thread = await _openai_then_claude(owner, openai_server, anthropic_server)

    run, events = await run_to_end(thread, "hello", owner)

    assert run.status == "failed"
    assert "openai/gpt-4o-mini, anthropic/claude-haiku-4-5" in events[-1]["error"]
    assert len(openai_server.requests) == 2 and len(anthropic_server.requests) == 2
    assert run.model == ""


def test_fallbacks_that_are_not_model_strings_are_refused_with_their_path(api):
    body = {"slug": "f", "name": "F", "default_options": {"fallbacks": ["openai/gpt-4o", "nope"]}}

    response = api.post("/api/agents/", body, format="json")

    assert response.status_code == 400
    assert "$.fallbacks[1]: must be a model string" in str(response.json()["default_options"])


async def test_the_offline_model_can_be_the_fallback(synced, owner, openai_server):
    openai_server.script = [Reply(status=500, error="boom")]
    thread = await _setup(
        owner,
        "openai/gpt-4o-mini",
        ["studio/scripted"],
        [("openai", "sk-good", openai_server.url)],
    )

    run, events = await run_to_end(thread, "hello", owner)

    assert run.status == "completed", run.error
    assert run.model == "studio/scripted" and events[-1]["model"] == "studio/scripted"
