"""A run calls its model with the key of the user who started it: their own credential,
else a site-wide one, never another user's; an OpenAI-compatible server's models are
written <credential name>/<model>. Checked on what a local OpenAI-protocol server receives."""

from __future__ import annotations

import pytest
from channels.db import database_sync_to_async

from tests.agents_core.runtime.conftest import run_to_end

pytestmark = pytest.mark.django_db(transaction=True)


def _thread(owner, model, metadata=None):
    from agents_core.models import Agent
    from agents_core.services.threads import thread_create

    agent = Agent.objects.create(
        slug="keyed", name="Keyed", model=model, owner=owner, metadata=metadata or {}
    )
    return thread_create(user=owner, agent=agent)


@database_sync_to_async
def _credential(owner, provider, key, base, name=""):
    from providers.services import credential_create

    return credential_create(owner=owner, provider=provider, name=name, api_key=key, api_base=base)


async def test_a_run_uses_the_users_own_key(synced, owner, openai_server):
    openai_server.key = "sk-owner-key-123456"
    await _credential(owner, "openai", "sk-owner-key-123456", openai_server.url)
    thread = await database_sync_to_async(_thread)(owner, "openai/gpt-4o-mini")

    run, events = await run_to_end(thread, "hello", owner)

    assert run.status == "completed", run.error
    [received] = openai_server.requests
    assert received.headers["Authorization"] == "Bearer sk-owner-key-123456"
    assert received.body["model"] == "gpt-4o-mini"
    assert events[-1]["text"] == "OK"


async def test_a_compatible_servers_models_go_to_its_base(synced, owner, openai_server):
    openai_server.key = "local-key-000001"
    await _credential(owner, "openai_compatible", "local-key-000001", openai_server.url, "box")
    thread = await database_sync_to_async(_thread)(owner, "box/llama-3-8b")

    run, _ = await run_to_end(thread, "hello", owner)

    assert run.status == "completed", run.error
    [received] = openai_server.requests
    assert received.body["model"] == "llama-3-8b"
    assert received.headers["Authorization"] == "Bearer local-key-000001"


async def test_another_users_credential_is_never_used(synced, owner, outsider, openai_server):
    await _credential(outsider, "openai_compatible", "sk-good", openai_server.url, "box")
    thread = await database_sync_to_async(_thread)(owner, "box/llama-3-8b")

    run, events = await run_to_end(thread, "hello", owner)

    assert run.status == "failed"
    assert events[-1]["type"] == "run-error"
    assert openai_server.requests == []


async def test_a_site_key_never_goes_to_a_base_the_agent_sets(synced, owner, openai_server):
    from providers.services import credential_create

    await database_sync_to_async(credential_create)(
        owner=None, provider="openai", api_key="sk-site-key-99999", api_base=openai_server.url
    )
    thread = await database_sync_to_async(_thread)(
        owner, "openai/gpt-4o-mini", {"api_base": openai_server.url}
    )

    run, _ = await run_to_end(thread, "hello", owner)

    assert all(
        "sk-site-key-99999" not in r.headers.get("Authorization", "")
        for r in openai_server.requests
    )
    assert run.status == "failed"


async def test_without_a_base_the_site_key_is_used(synced, owner, openai_server):
    from providers.services import credential_create

    openai_server.key = "sk-site-key-99999"
    await database_sync_to_async(credential_create)(
        owner=None, provider="openai", api_key="sk-site-key-99999", api_base=openai_server.url
    )
    thread = await database_sync_to_async(_thread)(owner, "openai/gpt-4o-mini")

    run, _ = await run_to_end(thread, "hello", owner)

    assert run.status == "completed", run.error
    assert openai_server.requests[0].headers["Authorization"] == "Bearer sk-site-key-99999"


async def test_a_credential_whose_base_left_the_list_ends_the_run(
    synced, owner, openai_server, settings
):
    await _credential(owner, "openai", "sk-owner-key-123456", openai_server.url)
    settings.STUDIO_MODEL_API_BASES = []
    thread = await database_sync_to_async(_thread)(owner, "openai/gpt-4o-mini")

    run, events = await run_to_end(thread, "hello", owner)

    assert run.status == "failed"
    assert events[-1]["code"] == "model_base_refused"
    assert openai_server.requests == []
