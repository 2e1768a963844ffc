"""Thread titles summarised by the agent's model from the first exchange
(agents_core/services/thread_titles.py): the offline model's deterministic title, a rename
that wins, a failing model that keeps the placeholder, what a real OpenAI-protocol server
receives, and the Celery task in a real worker."""

from __future__ import annotations

import time

import pytest

from agents_core.models import Agent, Thread
from agents_core.services.thread_titles import TITLE_INSTRUCTION, thread_title_generate
from agents_core.services.threads import thread_create
from providers.offline_title import title_of
from tests.agents_core.runtime.conftest import events_of
from tests.agents_core.runtime.test_threads_api import finish_runs

pytestmark = pytest.mark.django_db(transaction=True)

QUESTION = "Hi! Can you please tell me about the weather in Paris and Lyon tomorrow?"


def titled_thread(owner, **agent_fields):
    fields = {"model": "studio/scripted", "instructions": ["You are terse."], **agent_fields}
    agent = Agent.objects.create(slug="titled", name="Titled", owner=owner, **fields)
    return thread_create(user=owner, agent=agent)


def first_run(api, thread, message=QUESTION):
    started = api.post(f"/api/threads/{thread.pk}/runs/", {"message": message}, format="json")
    assert started.status_code in (200, 201), started.content
    finish_runs()
    thread.refresh_from_db()
    return started.json()["id"]


def test_the_offline_model_titles_a_thread_from_its_first_exchange(api, owner, synced):
    thread = titled_thread(owner)
    run_id = first_run(api, thread)
    assert thread.title == "Tell me about the weather in Paris…" and thread.title_auto

    assert thread_title_generate(run_id=run_id) == "Weather Paris Lyon Tomorrow"

    thread.refresh_from_db()
    assert thread.title == "Weather Paris Lyon Tomorrow" and not thread.title_auto
    assert api.get("/api/threads/").json()["results"][0]["title"] == thread.title
    event = events_of(thread)[-1]
    assert event == {**event, "type": "thread-updated", "title": thread.title, "runId": run_id}
    # Done once: a second copy of the task finds nothing to title.
    assert thread_title_generate(run_id=run_id) is None
    assert events_of(thread)[-1]["seq"] == event["seq"]


def test_a_rename_is_never_overwritten(api, owner, synced):
    thread = titled_thread(owner)
    run_id = first_run(api, thread)
    api.patch(f"/api/threads/{thread.pk}/", {"title": "My trip"}, format="json")

    assert thread_title_generate(run_id=run_id) is None
    thread.refresh_from_db()
    assert thread.title == "My trip"
    assert all(event["type"] != "thread-updated" for event in events_of(thread))


def test_a_failing_model_keeps_the_placeholder(api, owner, synced):
    thread = titled_thread(owner)
    run_id = first_run(api, thread)
    agent = thread.agent
    agent.default_options = {"providerOptions": {"studio": {"fail": "backend down"}}}
    agent.save()

    assert thread_title_generate(run_id=run_id) is None
    thread.refresh_from_db()
    assert thread.title == "Tell me about the weather in Paris…" and not thread.title_auto


def test_generate_title_off_leaves_the_thread_untitled(api, owner, synced):
    thread = titled_thread(owner, default_options={"generateTitle": False})
    run_id = first_run(api, thread)
    assert thread_title_generate(run_id=run_id) is None
    thread.refresh_from_db()
    assert thread.title == ""


def test_the_offline_title_skips_greetings_and_falls_back_to_the_answer():
    assert title_of("hello, can you help?") == ""
    assert title_of("Summarise the Q3 report for Acme, please") == "Summarise Q3 Report Acme"


def test_a_model_server_receives_the_exchange_and_a_short_instruction(
    api, owner, synced, openai_server
):
    from tests.model_servers import Reply

    openai_server.script = [
        Reply("Sunny."),
        Reply('"Paris and Lyon weather."'),
    ]
    thread = titled_thread(
        owner,
        model="openai/whatever",
        metadata={"api_base": openai_server.url},
        default_options={"modelSettings": {"api_key": openai_server.key}},
    )
    run_id = first_run(api, thread)

    assert thread_title_generate(run_id=run_id) == "Paris and Lyon weather"
    received = openai_server.requests[-1]
    assert len(openai_server.requests) == 2
    assert received.headers["Authorization"] == f"Bearer {openai_server.key}"
    body = received.body
    assert body["messages"] == [
        {"role": "system", "content": TITLE_INSTRUCTION},
        {
            "role": "user",
            "content": f"User: {QUESTION}\n\nAssistant: Sunny.",
        },
    ]
    assert "tools" not in body and not body.get("stream")
    assert body["model"] == "whatever" and body["max_tokens"] == 40


def test_a_celery_worker_titles_the_thread_after_the_run(api, owner, synced, celery_worker):
    thread = titled_thread(owner)
    first_run(api, thread)
    deadline = time.monotonic() + 60
    while Thread.objects.filter(pk=thread.pk, title_auto=True).exists():
        assert time.monotonic() < deadline, "no title from the worker"
        time.sleep(0.2)
    thread.refresh_from_db()
    assert thread.title == "Weather Paris Lyon Tomorrow"
