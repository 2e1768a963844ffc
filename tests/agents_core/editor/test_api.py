"""REST of the editor: overrides with ETag/If-Match, locks, revisions, restore, permissions."""

from __future__ import annotations

import pytest
from rest_framework.test import APIClient

from agents_core.models import Agent, EditLock

from .conftest import INSTRUCTIONS, grant


def client_for(user) -> APIClient:
    client = APIClient()
    client.force_authenticate(user)
    return client


@pytest.fixture
def editor_api(editor) -> APIClient:
    return client_for(editor)


def url(agent, tail: str = "overrides/") -> str:
    return f"/api/agents/{agent.slug}/{tail}"


def test_get_returns_the_state_with_the_version_as_etag(code_agent, editor_api):
    response = editor_api.get(url(code_agent))
    assert response.status_code == 200
    assert response["ETag"] == '"1"'
    body = response.json()
    assert body["version"] == 1
    assert body["instructions"]["code"] == INSTRUCTIONS
    assert body["instructions"]["overridden"] is False
    assert body["ownership"]["name"] == "code"
    assert body["ownership"]["instructions"] == "editor"
    assert [t["key"] for t in body["tools"]] == ["lookup", "convert"]


def test_patch_with_if_match_saves_and_returns_the_new_etag(code_agent, editor_api):
    response = editor_api.patch(
        url(code_agent), {"instructions": "Hi.", "name": "No"}, format="json", HTTP_IF_MATCH='"1"'
    )
    assert response.status_code == 200, response.json()
    assert response["ETag"] == '"2"'
    body = response.json()
    assert body["stripped"] == ["name"]
    assert body["instructions"] == {
        "code": INSTRUCTIONS,
        "effective": "Hi.",
        "overridden": True,
        "stored_override": "Hi.",
    }
    assert body["revision"]["version"] == 2


def test_a_failed_if_match_gets_412_and_changes_nothing(code_agent, editor_api):
    editor_api.patch(url(code_agent), {"instructions": "First.", "version": 1}, format="json")
    response = editor_api.patch(
        url(code_agent), {"instructions": "Second."}, format="json", HTTP_IF_MATCH='"1"'
    )
    assert response.status_code == 412
    assert response.json()["current"]["instructions"]["effective"] == "First."


def test_a_stale_body_version_gets_409_with_the_current_text_and_who_changed_it(
    code_agent, editor_api, second_editor
):
    editor_api.patch(
        url(code_agent), {"instructions": "Owner's text.", "version": 1}, format="json"
    )
    response = client_for(second_editor).patch(
        url(code_agent), {"instructions": "Teammate's text.", "version": 1}, format="json"
    )
    assert response.status_code == 409
    body = response.json()
    assert body["code"] == "stale_version"
    assert body["current"]["instructions"]["effective"] == "Owner's text."
    assert body["current"]["last_change"]["by"] == "owner"
    assert "owner" in body["detail"]


def test_a_write_naming_no_version_gets_428(code_agent, editor_api):
    response = editor_api.patch(url(code_agent), {"instructions": "x"}, format="json")
    assert response.status_code == 428
    assert editor_api.put(url(code_agent), {"instructions": "x"}, format="json").status_code == 428
    assert (
        editor_api.patch(
            url(code_agent), {"instructions": "x"}, format="json", HTTP_IF_MATCH="*"
        ).status_code
        == 428
    )


def test_put_replaces_the_whole_override(code_agent, editor_api):
    editor_api.patch(
        url(code_agent),
        {"instructions": "X.", "tool_descriptions": {"lookup": "L"}, "version": 1},
        format="json",
    )
    response = editor_api.put(
        url(code_agent), {"tool_descriptions": {"convert": "C"}}, format="json", HTTP_IF_MATCH='"2"'
    )
    assert response.status_code == 200
    assert response.json()["overrides"]["instructions"] is None
    assert response.json()["overrides"]["tool_descriptions"] == {"convert": "C"}


def test_reset_to_code_through_the_api(code_agent, editor_api):
    editor_api.patch(url(code_agent), {"instructions": "X.", "version": 1}, format="json")
    response = editor_api.post(
        url(code_agent, "overrides/reset"), {"field": "instructions", "version": 2}, format="json"
    )
    assert response.status_code == 200
    assert response.json()["instructions"]["effective"] == INSTRUCTIONS
    assert response.json()["revision"]["kind"] == "reset"


def test_revisions_list_detail_with_diff_and_restore(code_agent, editor_api):
    editor_api.patch(url(code_agent), {"instructions": "a\nb\nc", "version": 1}, format="json")
    editor_api.patch(url(code_agent), {"instructions": "a\nB\nc", "version": 2}, format="json")
    listing = editor_api.get(url(code_agent, "revisions/")).json()["results"]
    assert [r["version"] for r in listing] == [3, 2]
    detail = editor_api.get(url(code_agent, f"revisions/{listing[0]['id']}/")).json()
    (diff,) = detail["diff"]
    assert diff["field"] == "instructions"
    assert "-b\n+B" in diff["unified"]
    assert [(line["op"], line["text"]) for line in diff["lines"]] == [
        ("equal", "a"),
        ("delete", "b"),
        ("insert", "B"),
        ("equal", "c"),
    ]
    restored = editor_api.post(
        url(code_agent, f"revisions/{listing[1]['id']}/restore"), HTTP_IF_MATCH='"3"'
    )
    assert restored.status_code == 200
    assert restored.json()["instructions"]["effective"] == "a\nb\nc"
    assert restored.json()["revision"]["kind"] == "restore"
    stale = editor_api.post(
        url(code_agent, f"revisions/{listing[1]['id']}/restore"), {"version": 3}, format="json"
    )
    assert stale.status_code == 409


def test_revisions_need_the_view_permission(code_agent, editor_api, teammate):
    editor_api.patch(url(code_agent), {"instructions": "x", "version": 1}, format="json")
    assert client_for(teammate).get(url(code_agent, "revisions/")).status_code == 403
    viewer = grant(teammate, "view_agent")
    assert client_for(viewer).get(url(code_agent, "revisions/")).status_code == 200


def test_anonymous_is_refused_everywhere(code_agent, anon_client):
    for tail in ("overrides/", "lock/", "revisions/"):
        assert anon_client.get(url(code_agent, tail)).status_code == 401
    assert (
        anon_client.patch(
            url(code_agent), {"instructions": "x", "version": 1}, format="json"
        ).status_code
        == 401
    )
    assert anon_client.post(url(code_agent, "lock/")).status_code == 401


def test_an_outsider_cannot_edit_or_lock_a_code_agent(code_agent, outsider_api):
    response = outsider_api.patch(
        url(code_agent), {"instructions": "x", "version": 1}, format="json"
    )
    assert response.status_code == 403
    assert outsider_api.post(url(code_agent, "lock/")).status_code == 403
    assert Agent.objects.get(pk=code_agent.pk).version == 1


def test_a_studio_agent_is_invisible_to_an_outsider_and_editable_by_its_owner(
    owner, outsider_api, code_agent
):
    agent = Agent.objects.create(slug="owned", name="Owned", model="studio/scripted", owner=owner)
    assert outsider_api.get(url(agent)).status_code == 404
    assert (
        outsider_api.patch(url(agent), {"name": "x", "version": 1}, format="json").status_code
        == 404
    )
    response = client_for(owner).patch(url(agent), {"name": "Renamed", "version": 1}, format="json")
    assert response.status_code == 200
    assert response.json()["name"] == "Renamed"
    assert client_for(owner).get(url(agent, "revisions/")).status_code == 200


def test_lock_take_renew_release(code_agent, editor_api):
    taken = editor_api.post(url(code_agent, "lock/")).json()["lock"]
    assert taken["holder"] == "owner"
    renewed = editor_api.put(url(code_agent, "lock/")).json()["lock"]
    assert renewed["renew_count"] == 1
    assert renewed["expires_at"] >= taken["expires_at"]
    assert editor_api.delete(url(code_agent, "lock/")).status_code == 204
    assert editor_api.get(url(code_agent, "lock/")).json()["lock"] is None
    assert EditLock.objects.get().end_reason == "released"


def test_a_live_lock_refuses_a_second_editor_with_who_and_since(
    code_agent, editor_api, second_editor
):
    editor_api.post(url(code_agent, "lock/"))
    response = client_for(second_editor).post(url(code_agent, "lock/"))
    assert response.status_code == 423
    assert response.json()["lock"]["holder"] == "owner"
    assert client_for(second_editor).put(url(code_agent, "lock/")).status_code == 423


def test_breaking_a_live_lock_needs_the_permission_and_is_recorded(
    code_agent, editor_api, second_editor
):
    editor_api.post(url(code_agent, "lock/"))
    teammate = client_for(second_editor)
    assert teammate.post(url(code_agent, "lock/break")).status_code == 403
    breaker = grant(second_editor, "break_editlock")
    response = client_for(breaker).post(url(code_agent, "lock/break"))
    assert response.status_code == 200
    assert response.json()["lock"]["holder"] == "teammate"
    broken = EditLock.objects.get(holder__username="owner")
    assert (broken.end_reason, broken.ended_by.username) == ("broken", "teammate")
    # The owner's heartbeat now learns that the lock is gone.
    assert editor_api.put(url(code_agent, "lock/")).status_code == 423


def test_if_none_match_with_the_current_etag_gets_304(code_agent, editor_api):
    etag = editor_api.get(url(code_agent))["ETag"]
    assert editor_api.get(url(code_agent), HTTP_IF_NONE_MATCH=etag).status_code == 304
    editor_api.patch(url(code_agent), {"instructions": "x", "version": 1}, format="json")
    assert editor_api.get(url(code_agent), HTTP_IF_NONE_MATCH=etag).status_code == 200


def test_a_private_tool_cannot_be_added_to_a_shared_code_agent(code_agent, editor_api, editor):
    from tools_app.models import Tool

    Tool.objects.create(name="my_private_tool", kind="http", owner=editor, source="studio")
    response = editor_api.patch(
        url(code_agent), {"tools_added": {"mine": "my_private_tool"}, "version": 1}, format="json"
    )
    assert response.status_code == 400
    assert "tools_added" in response.json()


def test_delete_with_a_lock_id_releases_only_that_session(code_agent, editor_api):
    old = editor_api.post(url(code_agent, "lock/")).json()["lock"]
    new = editor_api.post(url(code_agent, "lock/"), {"take_over": True}, format="json").json()[
        "lock"
    ]
    assert editor_api.delete(url(code_agent, f"lock/?lock={old['id']}")).status_code == 204
    assert editor_api.get(url(code_agent, "lock/")).json()["lock"]["id"] == new["id"]


def test_revisions_are_paginated_newest_first(code_agent, editor_api):
    for version in range(1, 4):
        editor_api.patch(
            url(code_agent), {"instructions": f"v{version}", "version": version}, format="json"
        )
    body = editor_api.get(url(code_agent, "revisions/?limit=2")).json()
    assert body["count"] == 3
    assert [r["version"] for r in body["results"]] == [4, 3]
    assert body["next"]


def test_a_revision_diff_says_when_an_override_appears_or_goes(code_agent, editor_api):
    editor_api.patch(url(code_agent), {"instructions": "X.", "version": 1}, format="json")
    editor_api.post(
        url(code_agent, "overrides/reset"), {"field": "instructions", "version": 2}, format="json"
    )
    newest, oldest = editor_api.get(url(code_agent, "revisions/")).json()["results"]
    added = editor_api.get(url(code_agent, f"revisions/{oldest['id']}/")).json()["diff"]
    removed = editor_api.get(url(code_agent, f"revisions/{newest['id']}/")).json()["diff"]
    assert added[0]["note"] == "override added"
    assert removed[0]["note"] == "override removed: back to code"


def _lines(entry: dict) -> list[tuple[str, str]]:
    return [(line["op"], line["text"]) for line in entry["lines"]]


def test_the_first_overrides_diff_is_against_the_code_value(code_agent, editor_api):
    """An override appearing (or going away) is diffed against the code value, so the diff
    shows what the editor changed, not the whole text as new."""
    edited = INSTRUCTIONS.replace("briefly", "at length")
    editor_api.patch(
        url(code_agent),
        {
            "instructions": edited,
            "tool_descriptions": {"lookup": "Looks a word up in the dictionary."},
            "version": 1,
        },
        format="json",
    )
    editor_api.post(
        url(code_agent, "overrides/reset"), {"field": "instructions", "version": 2}, format="json"
    )
    reset, first = editor_api.get(url(code_agent, "revisions/")).json()["results"]

    diff = {
        e["field"]: e
        for e in editor_api.get(url(code_agent, f"revisions/{first['id']}/")).json()["diff"]
    }
    assert diff["instructions"]["note"] == "override added"
    assert _lines(diff["instructions"]) == [
        ("equal", "You are a careful assistant."),
        ("delete", "Answer briefly."),
        ("insert", "Answer at length."),
        ("equal", "Cite your tools."),
    ]
    assert "-Answer briefly." in diff["instructions"]["unified"]
    assert _lines(diff["tool_descriptions.lookup"]) == [
        ("delete", "Looks a word up."),
        ("insert", "Looks a word up in the dictionary."),
    ]

    back = editor_api.get(url(code_agent, f"revisions/{reset['id']}/")).json()["diff"]
    assert back[0]["note"] == "override removed: back to code"
    assert [line for line in _lines(back[0]) if line[0] != "equal"] == [
        ("delete", "Answer at length."),
        ("insert", "Answer briefly."),
    ]
