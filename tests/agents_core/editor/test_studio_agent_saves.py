"""PUT/PATCH /api/agents/<slug>/ on a studio agent: every save is a revision, a named
version (body or If-Match) is checked like the overrides endpoint's."""

from __future__ import annotations

import threading

import pytest
from django.db import connections

from agents_core.models import Agent, Revision
from agents_core.services.agents import agent_update
from common.exceptions import Conflict
from tests.agents_core.factories import AgentFactory

URL = "/api/agents/trip/"


@pytest.fixture
def trip(owner):
    return AgentFactory(slug="trip", name="Trip", owner=owner, instructions="Plan trips.")


@pytest.mark.django_db
def test_a_put_without_a_version_is_accepted_and_still_recorded(api, owner, trip):
    response = api.put(
        URL,
        {"name": "Trip planner", "model": "studio/scripted", "instructions": "Plan."},
        format="json",
    )

    assert response.status_code == 200, response.json()
    assert response.headers["ETag"] == '"2"'
    revision = Revision.objects.get(agent=trip)
    assert (revision.version, revision.author, revision.kind) == (2, owner, "save")
    assert {"name", "instructions"} <= set(revision.fields)
    assert (revision.before["name"], revision.after["name"]) == ("Trip", "Trip planner")
    assert revision.after["instructions"] == "Plan."


@pytest.mark.django_db
def test_a_patch_naming_the_current_version_in_the_body_saves(api, trip):
    response = api.patch(URL, {"description": "Trips.", "version": 1}, format="json")

    assert response.status_code == 200, response.json()
    assert response.json()["version"] == 2
    assert Revision.objects.get(agent=trip).fields == ["description"]


@pytest.mark.django_db
def test_a_stale_body_version_gets_409_with_the_current_state_and_writes_nothing(api, trip):
    api.patch(URL, {"name": "First"}, format="json")

    response = api.patch(URL, {"name": "Second", "version": 1}, format="json")

    assert response.status_code == 409
    body = response.json()
    assert body["code"] == "stale_version"
    assert body["current"]["name"] == "First"
    assert body["current"]["version"] == 2
    assert body["current"]["last_change"]["by"] == "owner"
    assert Agent.objects.get(pk=trip.pk).name == "First"
    assert Revision.objects.filter(agent=trip).count() == 1


@pytest.mark.django_db
def test_a_failed_if_match_gets_412_and_a_current_one_saves(api, trip):
    api.patch(URL, {"name": "First"}, format="json")

    stale = api.patch(URL, {"name": "Second"}, format="json", HTTP_IF_MATCH='"1"')
    fresh = api.patch(URL, {"name": "Third"}, format="json", HTTP_IF_MATCH='"2"')

    assert stale.status_code == 412
    assert stale.json()["code"] == "precondition_failed"
    assert fresh.status_code == 200
    assert fresh.headers["ETag"] == '"3"'
    assert Agent.objects.get(pk=trip.pk).name == "Third"


@pytest.mark.django_db
def test_if_match_and_a_different_body_version_are_refused(api, trip):
    response = api.patch(URL, {"name": "X", "version": 1}, format="json", HTTP_IF_MATCH='"2"')

    assert response.status_code == 400
    assert Agent.objects.get(pk=trip.pk).name == "Trip"


@pytest.mark.django_db
def test_a_save_that_changes_nothing_keeps_the_version_and_records_nothing(api, trip):
    response = api.patch(URL, {"name": "Trip", "version": 1}, format="json")

    assert response.status_code == 200
    assert Agent.objects.get(pk=trip.pk).version == 1
    assert not Revision.objects.filter(agent=trip).exists()


@pytest.mark.django_db
def test_the_revision_can_be_read_and_restored_by_the_owner(api, trip):
    api.patch(URL, {"instructions": "Line one.\nLine two."}, format="json")
    api.patch(URL, {"instructions": "Line one.\nLine 2."}, format="json")
    first = Revision.objects.filter(agent=trip).order_by("version").first()

    detail = api.get(f"/api/agents/trip/revisions/{first.pk}/").json()
    restored = api.post(
        f"/api/agents/trip/revisions/{first.pk}/restore", {"version": 3}, format="json"
    )

    assert detail["fields"] == ["instructions"]
    assert restored.status_code == 200, restored.json()
    assert Agent.objects.get(pk=trip.pk).instructions == "Line one.\nLine two."


@pytest.mark.django_db
def test_a_restore_brings_back_the_settings_saved_with_the_revision(api, trip):
    api.patch(
        URL,
        {"instructions": "Plan.", "default_options": {"maxSteps": 3}, "metadata": {"team": "a"}},
        format="json",
    )
    first = Revision.objects.get(agent=trip)
    api.patch(
        URL,
        {"instructions": "Plan more.", "default_options": {"maxSteps": 9}, "metadata": {}},
        format="json",
    )

    restored = api.post(
        f"/api/agents/trip/revisions/{first.pk}/restore", {"version": 3}, format="json"
    )

    assert restored.status_code == 200, restored.json()
    assert restored.json()["stripped"] == []
    trip.refresh_from_db()
    assert (trip.instructions, trip.default_options, trip.metadata) == (
        "Plan.",
        {"maxSteps": 3},
        {"team": "a"},
    )
    revision = Revision.objects.get(agent=trip, kind="restore")
    assert revision.fields == ["default_options", "instructions", "metadata"]


@pytest.mark.django_db
def test_an_outsider_cannot_save_and_an_anonymous_client_is_refused(
    outsider_api, anon_client, trip
):
    assert outsider_api.patch(URL, {"name": "X", "version": 1}, format="json").status_code == 404
    assert anon_client.patch(URL, {"name": "X", "version": 1}, format="json").status_code == 401
    assert Agent.objects.get(pk=trip.pk).version == 1


def save_in_thread(agent_pk, user, name, barrier, results):
    try:
        agent = Agent.objects.get(pk=agent_pk)
        barrier.wait(timeout=30)
        try:
            agent_update(lock_id=None, agent=agent, user=user, data={"name": name}, version=1)
            results[name] = "saved"
        except Conflict as exc:
            results[name] = exc.extra["current"]
    finally:
        connections.close_all()


@pytest.mark.django_db(transaction=True)
def test_concurrent_writers_from_the_same_version_exactly_one_wins(owner):
    trip = AgentFactory(slug="trip", name="Trip", owner=owner)
    names = [f"Writer {n}" for n in range(8)]
    barrier = threading.Barrier(len(names))
    results: dict = {}
    threads = [
        threading.Thread(target=save_in_thread, args=(trip.pk, owner, name, barrier, results))
        for name in names
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)

    winners = [name for name, outcome in results.items() if outcome == "saved"]
    assert len(results) == len(names)
    assert len(winners) == 1
    agent = Agent.objects.get(pk=trip.pk)
    assert (agent.name, agent.version) == (winners[0], 2)
    assert Revision.objects.filter(agent=agent).count() == 1
    for name, outcome in results.items():
        if name != winners[0]:
            # Each loser learns what is there now and can re-apply its change on top.
            assert (outcome["name"], outcome["version"]) == (winners[0], 2)


@pytest.mark.django_db(transaction=True)
def test_concurrent_writers_naming_no_version_are_all_recorded_one_after_another(owner):
    trip = AgentFactory(slug="trip", name="Trip", owner=owner)
    names = [f"Writer {n}" for n in range(6)]
    barrier = threading.Barrier(len(names))

    def save(name):
        try:
            agent = Agent.objects.get(pk=trip.pk)
            barrier.wait(timeout=30)
            agent_update(lock_id=None, agent=agent, user=owner, data={"name": name})
        finally:
            connections.close_all()

    threads = [threading.Thread(target=save, args=(name,)) for name in names]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)

    revisions = list(Revision.objects.filter(agent=trip).order_by("version"))
    assert [r.version for r in revisions] == list(range(2, 2 + len(names)))
    # Each revision's before is the previous one's after: no write went unrecorded.
    for previous, current in zip(revisions, revisions[1:], strict=False):
        assert current.before["name"] == previous.after["name"]
    assert Agent.objects.get(pk=trip.pk).name == revisions[-1].after["name"]
