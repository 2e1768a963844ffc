"""An agent's memory settings: how many thread messages the model sees (`lastMessages`),
and thread titles summarised from the first message (`generateTitle`), renamed over REST."""

from __future__ import annotations

import pytest
from channels.db import database_sync_to_async

from agents_core.services.threads import title_summary
from tests.agents_core.runtime.conftest import run_to_end
from tests.agents_core.runtime.test_openai_compatible import (  # noqa: F401 (a fixture)
    fake_openai,
    make_agent_thread,
)
from tests.agents_core.runtime.test_threads_api import finish_runs

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.mark.parametrize(
    ("message", "title"),
    [
        ("use weather_lookup for Paris", "Use weather_lookup for Paris"),
        (
            "Hi! Can you please plan a 3-day trip to Rome with museums and food?",
            "Plan a 3-day trip to Rome with…",
        ),
        ("Convert 10 km to miles. Then the weather.", "Convert 10 km to miles"),
        ("hello", "Hello"),
    ],
)
def test_a_title_is_the_first_sentence_without_greetings_in_a_few_words(message, title):
    assert title_summary(message) == title


async def test_the_model_sees_only_the_agents_last_messages(synced, owner, fake_openai):  # noqa: F811
    def limited_thread():
        thread = make_agent_thread(owner, fake_openai.url)
        thread.agent.default_options = {**thread.agent.default_options, "lastMessages": 2}
        thread.agent.save()
        return thread

    thread = await database_sync_to_async(limited_thread)()
    await run_to_end(thread, "weather in Paris?", owner)
    await run_to_end(thread, "and tomorrow?", owner)

    later = fake_openai.requests[2]["messages"]
    assert [m["role"] for m in later] == ["system", "system", "assistant", "user"]
    assert later[-1]["content"] == "and tomorrow?"


async def test_without_the_setting_the_model_sees_the_whole_thread(synced, owner, fake_openai):  # noqa: F811
    thread = await database_sync_to_async(make_agent_thread)(owner, fake_openai.url)
    await run_to_end(thread, "weather in Paris?", owner)
    await run_to_end(thread, "and tomorrow?", owner)

    roles = [m["role"] for m in fake_openai.requests[2]["messages"]]
    assert roles == ["system", "system", "user", "assistant", "tool", "assistant", "user"]


def test_a_thread_is_titled_by_its_first_message_and_renamed_over_rest(api, make_thread):
    thread = make_thread("weather-assistant")
    api.post(
        f"/api/threads/{thread.pk}/runs/",
        {"message": "Hello, could you use weather_lookup for Paris please?"},
        format="json",
    )
    finish_runs()
    assert api.get(f"/api/threads/{thread.pk}/").json()["title"] == (
        "Use weather_lookup for Paris please"
    )

    renamed = api.patch(f"/api/threads/{thread.pk}/", {"title": "Paris"}, format="json")
    assert renamed.status_code == 200 and renamed.json()["title"] == "Paris"
    api.post(f"/api/threads/{thread.pk}/runs/", {"message": "and London?"}, format="json")
    finish_runs()
    assert api.get(f"/api/threads/{thread.pk}/").json()["title"] == "Paris"


def test_an_agent_can_leave_threads_untitled(api, make_thread):
    thread = make_thread("weather-assistant")
    thread.agent.default_options = {"generateTitle": False}
    thread.agent.save()
    api.post(f"/api/threads/{thread.pk}/runs/", {"message": "use weather_lookup"}, format="json")
    finish_runs()
    assert api.get(f"/api/threads/{thread.pk}/").json()["title"] == ""


def test_stop_on_a_pending_question_says_it_was_stopped(api, make_thread):
    thread = make_thread("task-planner")
    started = api.post(
        f"/api/threads/{thread.pk}/runs/", {"message": "ask me which city to visit"}, format="json"
    )
    finish_runs()
    assert api.get(f"/api/runs/{started.json()['id']}/").json()["status"] == "suspended"

    stopped = api.post(f"/api/runs/{started.json()['id']}/abort", {}, format="json")

    assert stopped.status_code == 200 and stopped.json()["status"] == "aborted"
    events = api.get(f"/api/threads/{thread.pk}/events/?after=0").json()["events"]
    error = next(e for e in events if e["type"] == "tool-error")
    assert error["toolName"] == "ask_user" and error["error"].startswith("Stopped")
    assert events[-1]["type"] == "run-finish" and events[-1]["finishReason"] == "stopped"
