"""providerOptions reach real providers as each one's API takes them, checked on what local
OpenAI- and Anthropic-protocol servers receive; unknown options are refused at save time
(400 with the JSON path), at run start, and in a run (run-error), never dropped."""

from __future__ import annotations

import pytest
from channels.db import database_sync_to_async

from tests.agents_core.runtime.conftest import run_to_end

pytestmark = pytest.mark.django_db(transaction=True)


def _thread(owner, model, base, key, instructions="Be brief.", default_options=None):
    from agents_core.models import Agent
    from agents_core.services.threads import thread_create

    agent = Agent.objects.create(
        slug="optioned",
        name="Optioned",
        model=model,
        owner=owner,
        instructions=instructions,
        metadata={"api_base": base},
        default_options={"modelSettings": {"api_key": key}, **(default_options or {})},
    )
    return thread_create(user=owner, agent=agent)


async def test_openai_options_arrive_under_the_names_openai_takes(synced, owner, openai_server):
    options = {
        "providerOptions": {
            "openai": {"reasoningEffort": "low", "user": "u-7", "store": False},
            "anthropic": {"thinking": {"type": "enabled", "budgetTokens": 2048}},
        }
    }
    thread = await database_sync_to_async(_thread)(
        owner, "openai/o4-mini", openai_server.url, "sk-good", default_options=options
    )

    run, _ = await run_to_end(thread, "hello", owner)

    assert run.status == "completed", run.error
    body = openai_server.requests[0].body
    assert body["reasoning_effort"] == "low" and body["user"] == "u-7"
    assert body["store"] is False
    assert "thinking" not in body  # the anthropic group is for anthropic models


async def test_anthropic_gets_thinking_and_a_cache_breakpoint_on_the_instruction(
    synced, owner, anthropic_server
):
    instructions = [
        {
            "role": "system",
            "content": "A long, stable preamble.",
            "providerOptions": {"anthropic": {"cacheControl": {"type": "ephemeral"}}},
        },
        {"role": "system", "content": "Today's note."},
    ]
    thread = await database_sync_to_async(_thread)(
        owner, "anthropic/claude-sonnet-4-5", anthropic_server.url, "ant-good", instructions
    )
    run_options = {
        "providerOptions": {"anthropic": {"thinking": {"type": "enabled", "budgetTokens": 1024}}},
        "modelSettings": {"max_tokens": 4096, "api_key": "ant-good"},
    }

    run, events = await run_to_end(thread, "hello", owner, run_options)

    assert run.status == "completed", run.error
    assert events[-1]["text"].strip() == "OK"
    body = anthropic_server.requests[0].body
    assert body["thinking"] == {"type": "enabled", "budget_tokens": 1024}
    assert body["system"] == [
        {
            "type": "text",
            "text": "A long, stable preamble.",
            "cache_control": {"type": "ephemeral"},
        },
        {"type": "text", "text": "Today's note."},
    ]


async def test_a_cache_breakpoint_is_not_sent_to_another_provider(synced, owner, openai_server):
    instructions = {
        "role": "system",
        "content": "Preamble.",
        "providerOptions": {"anthropic": {"cacheControl": {"type": "ephemeral"}}},
    }
    thread = await database_sync_to_async(_thread)(
        owner, "openai/gpt-4o-mini", openai_server.url, "sk-good", instructions
    )

    run, _ = await run_to_end(thread, "hello", owner)

    assert run.status == "completed", run.error
    assert openai_server.requests[0].body["messages"][0] == {
        "role": "system",
        "content": "Preamble.",
    }


async def test_an_unknown_option_saved_before_the_check_ends_the_run(synced, owner, openai_server):
    from agents_core.models import Agent

    thread = await database_sync_to_async(_thread)(
        owner, "openai/gpt-4o-mini", openai_server.url, "sk-good"
    )
    # A row written around the API (an older save, a migration): the run refuses it.
    await database_sync_to_async(Agent.objects.filter(slug="optioned").update)(
        default_options={"providerOptions": {"openai": {"reasoningEfort": "low"}}}
    )

    run, events = await run_to_end(thread, "hello", owner)

    assert run.status == "failed"
    assert events[-1]["code"] == "provider_options_refused"
    assert "$.providerOptions.openai.reasoningEfort: unknown option" in events[-1]["error"]
    assert openai_server.requests == []
