"""REST of the chat: threads, events, runs; anonymous refused, owners only."""

from __future__ import annotations

import pytest
from asgiref.sync import async_to_sync

from agents_core.models import NotificationRecord, Run, Signal, Thread
from agents_core.runtime.execution.active import wait_idle
from tests.routes import all_routes

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def thread(make_thread):
    return make_thread("weather-assistant")


def finish_runs():
    async def wait():
        await wait_idle(60)

    async_to_sync(wait)()


def test_a_user_creates_a_thread_and_lists_it(api, synced):
    created = api.post(
        "/api/threads/", {"agent": "weather-assistant", "title": "Trip"}, format="json"
    )
    assert created.status_code == 201 and created.json()["agent"] == "weather-assistant"
    listed = api.get("/api/threads/").json()["results"]
    assert [t["id"] for t in listed] == [created.json()["id"]]


def test_an_unknown_agent_is_a_field_error(api, synced):
    response = api.post("/api/threads/", {"agent": "nobody"}, format="json")
    assert response.status_code == 400 and "agent" in response.json()


def test_a_run_started_over_rest_streams_to_the_event_log(api, thread):
    response = api.post(
        f"/api/threads/{thread.pk}/runs/",
        {"message": "use weather_lookup for Paris"},
        format="json",
    )
    assert response.status_code == 201
    finish_runs()
    events = api.get(f"/api/threads/{thread.pk}/events/?after=0").json()["events"]
    assert events[0]["type"] == "run-start" and events[-1]["type"] == "run-finish"
    later = api.get(f"/api/threads/{thread.pk}/events/?after={events[3]['seq']}").json()
    assert later["events"] == events[4:]
    messages = api.get(f"/api/threads/{thread.pk}/messages/").json()["results"]
    assert [m["role"] for m in messages] == ["user", "assistant", "tool", "assistant"]
    run = api.get(f"/api/runs/{response.json()['id']}/").json()
    assert run["status"] == "completed" and run["toolCalls"][0]["toolName"] == "weather_lookup"


def test_suspended_calls_are_listed_and_answered_over_rest(api, make_thread):
    thread = make_thread("rt-agent")
    api.post(f"/api/threads/{thread.pk}/runs/", {"message": "ask me which city"}, format="json")
    finish_runs()
    waiting = api.get(f"/api/threads/{thread.pk}/suspended/").json()["results"]
    assert len(waiting) == 1 and waiting[0]["suspendPayload"]["kind"] == "ask-user"
    bad = api.post(
        f"/api/runs/{waiting[0]['runId']}/resume",
        {"toolCallId": waiting[0]["toolCallId"], "payload": {"answer": 3}},
        format="json",
    )
    assert bad.status_code == 400 and bad.json()["errors"][0]["path"] == "$.answer"
    good = api.post(
        f"/api/runs/{waiting[0]['runId']}/resume",
        {"toolCallId": waiting[0]["toolCallId"], "payload": {"answer": "Oslo"}},
        format="json",
    )
    assert good.status_code == 200
    finish_runs()
    assert Run.objects.get(pk=waiting[0]["runId"]).status == "completed"
    again = api.post(
        f"/api/runs/{waiting[0]['runId']}/resume",
        {"toolCallId": waiting[0]["toolCallId"], "payload": {"answer": "Oslo"}},
        format="json",
    )
    assert again.status_code == 409


def test_tasks_are_listed(api, make_thread):
    thread = make_thread("rt-agent")
    api.post(
        f"/api/threads/{thread.pk}/runs/",
        {"message": 'use task_write with {"tasks": [{"title": "pack"}]}'},
        format="json",
    )
    finish_runs()
    tasks = api.get(f"/api/threads/{thread.pk}/tasks/").json()["tasks"]
    assert [t["title"] for t in tasks] == ["pack"]


def _id_routes() -> list[tuple[str, str]]:
    """Every route (API and pages) that takes a thread or run id, with each method its view
    answers: read from the URL configuration, so a new route is covered without a list."""
    routes = []
    for route, pattern in all_routes():
        if "<uuid:thread_id>" not in route and "<uuid:run_id>" not in route:
            continue
        view = getattr(pattern.callback, "cls", None)
        methods = [m for m in METHODS if hasattr(view, m)] if view else ["get", "post"]
        routes += [(method, route) for method in methods]
    return sorted(routes)


METHODS = ("get", "post", "put", "patch", "delete")
ID_ROUTES = _id_routes()


def test_the_id_routes_cover_threads_runs_signals_and_the_chat_page():
    paths = {route for _, route in ID_ROUTES}
    assert {"api/threads/<uuid:thread_id>/", "api/runs/<uuid:run_id>/abort"} <= paths
    assert {"api/threads/<uuid:thread_id>/signals/", "chat/t/<uuid:thread_id>/"} <= paths


@pytest.mark.parametrize("method,route", ID_ROUTES)
def test_another_users_thread_or_run_is_not_found(client, outsider, thread, method, route):
    run = Run.objects.create(thread=thread, agent=thread.agent, status="suspended")
    thread_before = Thread.objects.filter(pk=thread.pk).values().get()
    client.force_login(outsider)
    path = "/" + route.replace("<uuid:thread_id>", str(thread.pk)).replace(
        "<uuid:run_id>", str(run.pk)
    )
    body = {"message": "hi", "title": "x", "toolCallId": "x", "payload": {}, "type": "user"}

    response = getattr(client, method)(path, body, content_type="application/json")

    assert response.status_code == 404, (method, path, response.status_code)
    assert Thread.objects.filter(pk=thread.pk).values().get() == thread_before
    assert list(Run.objects.values_list("pk", "status")) == [(run.pk, "suspended")]
    assert not Signal.objects.exists() and not NotificationRecord.objects.exists()


def test_another_user_cannot_start_resume_or_abort(outsider_api, api, thread):
    assert (
        outsider_api.post(
            f"/api/threads/{thread.pk}/runs/", {"message": "hi"}, format="json"
        ).status_code
        == 404
    )
    run = api.post(f"/api/threads/{thread.pk}/runs/", {"message": "hi"}, format="json").json()
    finish_runs()
    assert outsider_api.post(f"/api/runs/{run['id']}/abort").status_code == 404
    assert (
        outsider_api.post(
            f"/api/runs/{run['id']}/resume", {"toolCallId": "x", "payload": {}}, format="json"
        ).status_code
        == 404
    )


@pytest.mark.parametrize(
    "method,path",
    [
        ("get", "/api/threads/"),
        ("post", "/api/threads/"),
        ("get", "/api/threads/{t}/"),
        ("get", "/api/threads/{t}/events/"),
        ("post", "/api/threads/{t}/runs/"),
        ("get", "/api/threads/{t}/suspended/"),
    ],
)
def test_anonymous_requests_are_refused(anon_client, thread, method, path):
    response = getattr(anon_client, method)(path.format(t=thread.pk))
    assert response.status_code == 401
