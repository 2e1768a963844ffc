"""A case drafted from a chat thread: its turns, the calls made as expected calls, the
answers given as the script; saved as it is, it passes against the same agent."""

from __future__ import annotations

import pytest

from agents_core.models import Agent
from evals.models import TestCase
from evals.runner import case_play
from evals.services.cases import case_create

pytestmark = pytest.mark.django_db(transaction=True)


def _chat(owner) -> object:
    """A two-turn chat with the demo agent, played by the runner (real runs)."""
    agent = Agent.objects.get(slug="travel-desk")
    spec = {
        "turns": [
            {"message": "use weather_lookup for Rome"},
            {
                "message": "ask me which city, options: Paris, London",
                "answers": [{"tool": "ask_user", "payload": {"answer": "Paris"}}],
            },
        ]
    }
    scratch = TestCase.objects.create(agent=agent, owner=owner, name="scratch", spec=spec)
    return case_play(case=scratch, user=owner).thread


def test_a_draft_from_a_chat_replays_it(api, owner, synced):
    thread = _chat(owner)
    response = api.get(f"/api/threads/{thread.pk}/test-case-draft")
    assert response.status_code == 200, response.content
    draft = response.json()
    first, second = draft["spec"]["turns"]
    assert first["message"] == "use weather_lookup for Rome"
    assert first["expect"][0] == {
        "type": "tool_called",
        "tool": "weather_lookup",
        "args": {"city": "Rome"},
    }
    assert first["expect"][-1] == {"type": "no_error"}
    assert second["answers"] == [{"tool": "ask_user", "payload": {"answer": "Paris"}}]

    case = case_create(agent=thread.agent, owner=owner, name="from chat", spec=draft["spec"])
    assert case_play(case=case, user=owner).passed


def test_another_users_thread_is_a_404(api, outsider_api, owner, synced):
    thread = _chat(owner)
    assert outsider_api.get(f"/api/threads/{thread.pk}/test-case-draft").status_code == 404
