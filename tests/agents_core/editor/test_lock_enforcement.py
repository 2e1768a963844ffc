"""Every REST write is refused (423) while another session holds the agent's live edit lock:
overrides PUT/PATCH, reset, restore, a code agent's binding and sub-agent writes, a studio
agent's saves and policy. The body names the holder and the expiry, in words and as ISO
times; nothing is written. A write naming the holder's session goes through."""

from __future__ import annotations

import re
from datetime import timedelta

import pytest
from django.utils import timezone
from rest_framework.test import APIClient

from agents_core import overrides
from agents_core.models import Agent, AgentTool, EditLock, Revision, SubAgent
from tests.agents_core.factories import AgentFactory

from .conftest import INSTRUCTIONS, definition, sync

pytestmark = pytest.mark.django_db
ISO = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d")


def client_for(user, lock_id: int | None = None) -> APIClient:
    client = APIClient()
    client.force_authenticate(user)
    if lock_id is not None:
        client.credentials(HTTP_X_EDIT_LOCK=str(lock_id))
    return client


@pytest.fixture
def agent(editor) -> Agent:
    """A code agent whose tool `lookup` the lock holder has overridden (version 2, one
    revision), with a studio tool and a studio sub-agent added through the API."""
    sync(definition("editor-agent"), definition("child-agent"))
    agent = Agent.objects.get(slug="editor-agent")
    saved = client_for(editor).patch(
        f"/api/agents/{agent.slug}/overrides/",
        {"tool_descriptions": {"lookup": "The holder's description."}, "version": 1},
        format="json",
    )
    assert saved.status_code == 200
    AgentTool.objects.create(
        agent=agent, tool=AgentTool.objects.get(agent=agent, key="convert").tool, key="extra"
    )
    SubAgent.objects.create(parent=agent, child=Agent.objects.get(slug="child-agent"), key="aide")
    return Agent.objects.get(pk=agent.pk)


def _writes(agent: Agent) -> dict[str, tuple[str, str, dict | None]]:
    base = f"/api/agents/{agent.slug}"
    revision = Revision.objects.get(agent=agent)
    return {
        "overrides PATCH": ("patch", f"{base}/overrides/", {"instructions": "Mine.", "version": 2}),
        "overrides PUT": ("put", f"{base}/overrides/", {"instructions": "Mine.", "version": 2}),
        "reset": (
            "post",
            f"{base}/overrides/reset",
            {"field": "tool_descriptions", "key": "lookup", "version": 2},
        ),
        "restore": ("post", f"{base}/revisions/{revision.pk}/restore", {"version": 2}),
        "add tool": ("post", f"{base}/tools/", {"tool": "editor_test_extra", "key": "more"}),
        "describe tool": ("patch", f"{base}/tools/extra/", {"description_override": "Mine."}),
        "remove tool": ("delete", f"{base}/tools/extra/", None),
        "add sub-agent": ("post", f"{base}/subagents/", {"agent": "child-agent", "key": "two"}),
        "remove sub-agent": ("delete", f"{base}/subagents/aide/", None),
    }


WRITE_NAMES = [
    "overrides PATCH",
    "overrides PUT",
    "reset",
    "restore",
    "add tool",
    "describe tool",
    "remove tool",
    "add sub-agent",
    "remove sub-agent",
]


def snapshot(agent: Agent) -> tuple:
    agent = Agent.objects.get(pk=agent.pk)
    return (
        agent.version,
        Revision.objects.filter(agent=agent).count(),
        overrides.agent_override(agent).as_document(),
        sorted(agent.tool_bindings.values_list("key", "description_override")),
        sorted(agent.subagent_bindings.values_list("key", "description_override")),
    )


def take_lock(agent: Agent, user) -> EditLock:
    """The lock as an editor page takes it (POST .../lock/)."""
    response = client_for(user).post(f"/api/agents/{agent.slug}/lock/")
    assert response.status_code == 200
    return EditLock.objects.get(pk=response.json()["lock"]["id"])


def send(client: APIClient, write: tuple[str, str, dict | None]):
    method, url, body = write
    return getattr(client, method)(url, body, format="json")


@pytest.mark.parametrize("name", WRITE_NAMES)
def test_a_write_by_another_user_is_refused_with_who_holds_the_lock_and_until_when(
    agent, editor, second_editor, name
):
    lock = take_lock(agent, editor)
    before = snapshot(agent)
    write = _writes(agent)[name]

    # Naming no session, or naming the holder's session, makes no difference.
    for client in (client_for(second_editor), client_for(second_editor, lock.pk)):
        response = send(client, write)
        assert response.status_code == 423, response.json()
        body = response.json()
        assert (body["code"], body["holder"], body["yours"]) == ("locked", "owner", False)
        assert body["since"] == lock.acquired_at.isoformat()
        assert body["expires"] == lock.expires_at.isoformat()
        assert body["since_text"] == "just now" or body["since_text"].endswith("ago")
        assert body["expires_text"].endswith("from now")
        assert body["lock"]["id"] == lock.pk
        assert "owner is editing this agent" in body["detail"]
        assert "Nothing was saved" in body["detail"]
        assert not ISO.search(body["detail"])  # times in words, never raw stamps
        assert snapshot(agent) == before

    # The holder's session writes.
    assert send(client_for(editor, lock.pk), write).status_code in (200, 201, 204)
    assert snapshot(agent) != before


@pytest.mark.parametrize("name", WRITE_NAMES)
def test_the_holders_other_session_is_refused_and_told_it_is_theirs(agent, editor, name):
    lock = take_lock(agent, editor)
    before = snapshot(agent)
    response = send(client_for(editor), _writes(agent)[name])
    assert response.status_code == 423
    body = response.json()
    assert body["yours"] is True
    assert "another tab or window" in body["detail"]
    assert body["lock"]["id"] == lock.pk
    assert snapshot(agent) == before


@pytest.mark.parametrize("name", WRITE_NAMES)
def test_with_no_live_lock_a_write_without_a_session_is_guarded_by_the_version_only(
    agent, editor, second_editor, name
):
    lock = take_lock(agent, editor)
    EditLock.objects.filter(pk=lock.pk).update(expires_at=timezone.now() - timedelta(seconds=1))
    before = snapshot(agent)
    assert send(client_for(second_editor), _writes(agent)[name]).status_code in (200, 201, 204)
    assert snapshot(agent) != before


def test_the_holders_override_survives_every_refused_write(agent, editor, second_editor):
    lock = take_lock(agent, editor)
    for name in WRITE_NAMES:
        send(client_for(second_editor), _writes(agent)[name])
    agent = Agent.objects.get(pk=agent.pk)
    assert agent.version == 2
    lookup = next(b for b in overrides.effective_tool_bindings(agent) if b.key == "lookup")
    assert overrides.effective_tool_description(lookup) == "The holder's description."
    assert EditLock.objects.get(ended_at__isnull=True).pk == lock.pk


def test_a_malformed_lock_header_is_a_400_and_writes_nothing(agent, editor):
    client = APIClient()
    client.force_authenticate(editor)
    response = client.patch(
        f"/api/agents/{agent.slug}/overrides/",
        {"instructions": "Mine.", "version": 2},
        format="json",
        HTTP_X_EDIT_LOCK="mine",
    )
    assert response.status_code == 400
    assert "X-Edit-Lock" in response.json()
    assert Agent.objects.get(pk=agent.pk).version == 2


def test_a_studio_agents_saves_and_policy_are_refused_while_its_owners_page_holds_the_lock(
    owner,
):
    """The owner's editor tab holds the lock: a REST client of the same owner is refused."""
    trip = AgentFactory(slug="trip", name="Trip", owner=owner, instructions="Plan trips.")
    lock = take_lock(trip, owner)
    rest = client_for(owner)
    refused = [
        rest.patch("/api/agents/trip/", {"name": "Other"}, format="json"),
        rest.put(
            "/api/agents/trip/notification-policy", {"priority": {"low": "now"}}, format="json"
        ),
    ]
    assert [r.status_code for r in refused] == [423, 423]
    assert all(r.json()["yours"] for r in refused)
    trip.refresh_from_db()
    assert (trip.name, trip.notification_policy, trip.version) == ("Trip", {}, 1)
    page = client_for(owner, lock.pk)
    assert page.patch("/api/agents/trip/", {"name": "Other"}, format="json").status_code == 200


def test_taking_the_lock_over_through_the_api_moves_it_to_the_new_session(agent, editor):
    first = client_for(editor).post(f"/api/agents/{agent.slug}/lock/").json()["lock"]
    refused = client_for(editor).post(f"/api/agents/{agent.slug}/lock/")
    assert refused.status_code == 423 and refused.json()["yours"] is True
    second = client_for(editor).post(
        f"/api/agents/{agent.slug}/lock/", {"take_over": True}, format="json"
    )
    assert second.status_code == 200
    new_id = second.json()["lock"]["id"]
    assert new_id != first["id"]
    old = client_for(editor).put(f"/api/agents/{agent.slug}/lock/?lock={first['id']}")
    assert old.status_code == 423 and old.json()["lock"]["id"] == new_id
    write = client_for(editor, first["id"]).patch(
        f"/api/agents/{agent.slug}/overrides/",
        {"instructions": "Old tab.", "version": 2},
        format="json",
    )
    assert write.status_code == 423
    assert overrides.effective_instructions(Agent.objects.get(pk=agent.pk)) == INSTRUCTIONS
