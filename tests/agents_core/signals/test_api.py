"""REST endpoints of signals and the inbox: authenticated, on the caller's own threads."""

from __future__ import annotations

import pytest

from agents_core.models import NotificationRecord, Signal, Thread
from tests.agents_core.factories import AgentFactory

pytestmark = pytest.mark.django_db


def url(thread, tail):
    return f"/api/threads/{thread.id}/{tail}"


WRITES = [
    ("send-message", {"message": "hi", "ifIdle": "persist"}),
    ("queue-message", {"message": "hi"}),
    ("signals/", {"type": "user", "contents": "x"}),
    ("state-signals/", {"id": "cart", "value": {"n": 1}}),
    ("notifications/", {"source": "ci", "summary": "x", "priority": "low"}),
    ("notifications/digest", {}),
    ("abort", {}),
]
READS = ["signals/", "notifications/", "subscription/"]


@pytest.mark.parametrize("tail,body", WRITES)
def test_anonymous_writes_are_refused(anon_client, thread, tail, body):
    response = anon_client.post(url(thread, tail), body, format="json")
    assert response.status_code == 401
    assert not Signal.objects.exists() and not NotificationRecord.objects.exists()


@pytest.mark.parametrize("tail", READS)
def test_anonymous_reads_are_refused(anon_client, thread, tail):
    assert anon_client.get(url(thread, tail)).status_code == 401


@pytest.mark.parametrize("tail,body", WRITES)
def test_another_users_thread_cannot_be_signalled(outsider_api, thread, tail, body):
    response = outsider_api.post(url(thread, tail), body, format="json")
    assert response.status_code == 404
    assert not Signal.objects.exists() and not NotificationRecord.objects.exists()
    assert not thread.runs.exists()


@pytest.mark.parametrize("tail", READS)
def test_another_users_thread_cannot_be_read_or_subscribed(outsider_api, thread, tail):
    assert outsider_api.get(url(thread, tail)).status_code == 404


def test_a_message_to_an_idle_thread_can_be_persisted(api, thread):
    response = api.post(
        url(thread, "send-message"),
        {"message": "note", "ifIdle": "persist", "attributes": {"from": "me"}},
        format="json",
    )
    assert response.status_code == 201, response.json()
    body = response.json()
    assert body["decision"] == "persist"
    assert body["signal"]["attributes"] == {"from": "me"}
    assert body["runId"] is None


def test_a_message_into_a_running_run_says_deliver_with_the_run(token_client, thread, running_run):
    response = token_client.post(url(thread, "send-message"), {"message": "more"}, format="json")
    assert response.status_code == 201
    assert response.json()["decision"] == "deliver"
    assert response.json()["runId"] == str(running_run.id)


def test_bad_choices_are_per_field_errors(api, thread):
    response = api.post(
        url(thread, "send-message"), {"message": "", "ifActive": "yell"}, format="json"
    )
    assert response.status_code == 400
    assert set(response.json()) == {"message", "ifActive"}


def test_an_unknown_signal_type_is_a_clear_400(api, thread):
    response = api.post(
        url(thread, "signals/"), {"type": "psychic", "contents": "x"}, format="json"
    )
    assert response.status_code == 400
    assert "Unknown signal type 'psychic'" in response.json()["detail"]
    assert response.json()["errors"][0]["path"] == "$.type"


def test_a_hostile_tag_name_is_a_400(api, thread):
    response = api.post(
        url(thread, "signals/"), {"type": "user", "tagName": "a><b", "contents": "x"}, format="json"
    )
    assert response.status_code == 400
    assert response.json()["code"] == "invalid_name"


def test_an_unchanged_state_answers_skip(api, thread):
    body = {"id": "cart", "cacheKey": "v1", "value": {"n": 1}}
    assert api.post(url(thread, "state-signals/"), body, format="json").status_code == 201
    response = api.post(url(thread, "state-signals/"), body, format="json")
    assert response.status_code == 200
    assert response.json()["decision"] == "skip"


def test_the_inbox_lists_records_with_counts_per_status(api, thread, running_run):
    for n in range(3):
        api.post(
            url(thread, "notifications/"),
            {"source": "ci", "summary": f"c{n}", "priority": "low", "coalesceKey": "pr"},
            format="json",
        )
    api.post(
        url(thread, "notifications/"),
        {"source": "pager", "summary": "down", "priority": "high"},
        format="json",
    )
    body = api.get(url(thread, "notifications/")).json()
    assert body["counts"]["pending"] == {"records": 1, "notifications": 3}
    assert body["counts"]["summarized"] == {"records": 1, "notifications": 1}
    assert [r["summary"] for r in body["results"]] == ["down", "c2"]
    digested = api.post(url(thread, "notifications/digest"), {}, format="json").json()
    assert digested["counts"]["digested"] == {"records": 1, "notifications": 3}


def test_a_notification_with_a_bad_priority_is_refused(api, thread):
    response = api.post(
        url(thread, "notifications/"),
        {"source": "ci", "summary": "x", "priority": "critical"},
        format="json",
    )
    assert response.status_code == 400
    assert "priority" in response.json()


def test_the_subscription_names_the_stream_and_the_active_run(api, thread, running_run):
    body = api.get(url(thread, "subscription/")).json()
    assert body["activeRunId"] == str(running_run.id)
    assert body["websocket"] == f"/ws/threads/{thread.id}/"


def test_signals_are_listed_for_the_owner(api, thread):
    api.post(url(thread, "signals/"), {"type": "state", "contents": "x"}, format="json")
    [signal] = api.get(url(thread, "signals/")).json()
    assert (signal["type"], signal["decision"]) == ("state", "persist")


# --- the agent's notification policy -------------------------------------------------------
def policy_url(agent):
    return f"/api/agents/{agent.slug}/notification-policy"


def test_the_owner_sets_a_studio_agents_policy(api, agent):
    response = api.put(policy_url(agent), {"policy": {"priority": {"low": "now"}}}, format="json")
    assert response.status_code == 200, response.json()
    assert response.json()["table"]["low"] == {"active": "now", "idle": "now"}
    agent.refresh_from_db()
    assert agent.notification_policy == {"priority": {"low": {"active": "now", "idle": "now"}}}
    # A save like any other: a revision with the policy before and after.
    from agents_core.models import Revision

    revision = Revision.objects.get(agent=agent)
    assert (revision.fields, revision.before["notification_policy"], revision.version) == (
        ["notification_policy"],
        {},
        agent.version,
    )
    assert revision.after["notification_policy"] == agent.notification_policy


def test_an_invalid_policy_is_refused_and_nothing_is_saved(api, agent):
    response = api.put(policy_url(agent), {"policy": {"priority": {"low": "shout"}}}, format="json")
    assert response.status_code == 400
    assert response.json()["errors"][0]["path"] == "$.priority.low.active"
    agent.refresh_from_db()
    assert agent.notification_policy == {}


def test_a_code_agents_policy_is_read_only(api):
    code = AgentFactory(slug="coded", code=True)
    assert api.get(policy_url(code)).json()["editable"] is False
    response = api.put(policy_url(code), {"policy": {}}, format="json")
    assert response.status_code == 403


def test_another_users_agent_policy_is_not_found(outsider_api, agent):
    assert outsider_api.get(policy_url(agent)).status_code == 404
    assert outsider_api.put(policy_url(agent), {"policy": {}}, format="json").status_code == 404


def test_anonymous_policy_access_is_refused(anon_client, agent):
    assert anon_client.get(policy_url(agent)).status_code == 401
    assert anon_client.put(policy_url(agent), {"policy": {}}, format="json").status_code == 401


def test_a_thread_of_mine_with_another_agent_is_still_mine(api, owner):
    code = AgentFactory(slug="shared", code=True)
    thread = Thread.objects.create(agent=code, owner=owner, resource_id=str(owner.pk))
    assert api.get(url(thread, "notifications/")).status_code == 200
