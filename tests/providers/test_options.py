"""The providerOptions table: each provider's options mapped to litellm's arguments, and
every unknown group, option or value refused with its JSON path."""

from __future__ import annotations

import pytest

from providers.options import call_kwargs, call_option_problems, message_option_problems

pytestmark = pytest.mark.django_db


@pytest.mark.parametrize(
    "model,options,expected",
    [
        ("openai/o4-mini", {"openai": {"reasoningEffort": "high"}}, {"reasoning_effort": "high"}),
        (
            "anthropic/claude-sonnet-4-5",
            {"anthropic": {"thinking": {"type": "enabled", "budgetTokens": 500}}},
            {"thinking": {"type": "enabled", "budget_tokens": 500}},
        ),
        (
            "gemini/gemini-2.5-flash",
            {
                "google": {
                    "safetySettings": [
                        {"category": "HARM_CATEGORY_HATE_SPEECH", "threshold": "BLOCK_NONE"}
                    ]
                }
            },
            {
                "safety_settings": [
                    {"category": "HARM_CATEGORY_HATE_SPEECH", "threshold": "BLOCK_NONE"}
                ]
            },
        ),
        ("mistral/mistral-small-latest", {"mistral": {"safePrompt": True}}, {"safe_prompt": True}),
        (
            "groq/openai/gpt-oss-20b",
            {"groq": {"reasoningFormat": "parsed"}},
            {"reasoning_format": "parsed"},
        ),
        # Another provider's group is left for that provider.
        ("openai/gpt-4o", {"anthropic": {"thinking": {"type": "disabled"}}}, {}),
    ],
)
def test_each_provider_gets_its_own_arguments(model, options, expected):
    assert call_kwargs(options, model) == expected


def test_unknown_groups_options_and_values_are_refused_with_their_paths():
    problems = call_option_problems(
        {
            "openia": {"reasoningEffort": "low"},
            "openai": {"reasoningEffort": "extreme", "temperature": 1},
            "anthropic": "fast",
        }
    )

    assert [p.split(": ")[0] for p in problems] == [
        "$.providerOptions.openia",
        "$.providerOptions.openai.reasoningEffort",
        "$.providerOptions.openai.temperature",
        "$.providerOptions.anthropic",
    ]
    with pytest.raises(ValueError, match="openai.temperature: unknown option"):
        call_kwargs({"openai": {"temperature": 1}}, "openai/gpt-4o")


def test_an_instruction_takes_only_a_cache_breakpoint():
    assert (
        message_option_problems({"anthropic": {"cacheControl": {"type": "ephemeral"}}}, "$") == []
    )
    problems = message_option_problems(
        {"anthropic": {"cacheControl": {"type": "forever"}}, "openai": {"user": "x"}}, "$[0]"
    )
    assert [p.split(": ")[0] for p in problems] == [
        "$[0].anthropic.cacheControl",
        "$[0].openai",
    ]


def test_a_save_with_an_unknown_option_is_a_400_naming_it(api):
    body = {
        "slug": "opts",
        "name": "Opts",
        "model": "openai/gpt-4o-mini",
        "default_options": {"providerOptions": {"openai": {"reasoningEfort": "low"}}},
    }
    response = api.post("/api/agents/", body, format="json")
    assert response.status_code == 400
    assert "$.providerOptions.openai.reasoningEfort: unknown option" in str(
        response.json()["default_options"]
    )

    body["default_options"] = {}
    body["instructions"] = [
        {"role": "system", "content": "x", "providerOptions": {"anthropic": {"cache": 1}}}
    ]
    response = api.post("/api/agents/", body, format="json")
    assert response.status_code == 400
    assert "$[0].providerOptions.anthropic.cache" in str(response.json()["instructions"])


def test_a_run_started_with_an_unknown_option_is_a_400(api, owner):
    from agents_core.services.threads import thread_create
    from tests.agents_core.factories import AgentFactory

    thread = thread_create(user=owner, agent=AgentFactory(slug="o", owner=owner))

    response = api.post(
        f"/api/threads/{thread.pk}/runs/",
        {"message": "hi", "options": {"providerOptions": {"openai": {"effort": "low"}}}},
        format="json",
    )

    assert response.status_code == 400
    assert response.json()["errors"][0]["path"] == "$.options.providerOptions.openai.effort"
