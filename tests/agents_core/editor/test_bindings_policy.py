"""The REST binding endpoints on code agents obey the editor policy and the change permission,
and every change they make is an editor revision."""

from __future__ import annotations

import pytest
from rest_framework.test import APIClient

from agents_core import overrides
from agents_core.models import Agent, AgentTool, Revision, SubAgent
from tests.agents_core.editor.conftest import definition, sync
from tests.agents_core.factories import AgentFactory
from tests.tools_app.factories import ToolFactory
from tools_app.models import Tool

pytestmark = pytest.mark.django_db

# Every `editor` form: (policy, opens membership, opens descriptions).
POLICIES = [
    pytest.param(None, True, True, id="omitted"),
    pytest.param(False, False, False, id="false"),
    pytest.param({"instructions": True}, False, False, id="instructions-only"),
    pytest.param({"tools": True}, True, True, id="tools"),
    pytest.param({"tools": {"description": True}}, False, True, id="tool-descriptions-only"),
]


@pytest.fixture
def client_for():
    def make(user) -> APIClient:
        client = APIClient()
        client.force_authenticate(user)
        return client

    return make


def code_agent_with(policy) -> Agent:
    """A code agent with the policy, a child code agent, and one studio tool and sub-agent."""
    sync(definition("editor-agent", editor=policy), definition("child-agent"))
    agent = Agent.objects.get(slug="editor-agent")
    AgentTool.objects.create(
        agent=agent, tool=Tool.objects.get(name="editor_test_extra"), key="extra", position=9
    )
    SubAgent.objects.create(parent=agent, child=Agent.objects.get(slug="child-agent"), key="aide")
    return Agent.objects.get(pk=agent.pk)


def tool_keys(agent: Agent) -> set[str]:
    return set(agent.tool_bindings.values_list("key", flat=True))


WRITES = {
    "add tool": (
        "post",
        "/api/agents/editor-agent/tools/",
        {"tool": "editor_test_convert", "key": "conv2"},
    ),
    "remove tool": ("delete", "/api/agents/editor-agent/tools/extra/", None),
    "describe tool": (
        "patch",
        "/api/agents/editor-agent/tools/extra/",
        {"description_override": "Mine."},
    ),
    "add sub-agent": (
        "post",
        "/api/agents/editor-agent/subagents/",
        {"agent": "child-agent", "key": "aide2"},
    ),
    "remove sub-agent": ("delete", "/api/agents/editor-agent/subagents/aide/", None),
    "describe sub-agent": (
        "patch",
        "/api/agents/editor-agent/subagents/aide/",
        {"description_override": "Helps."},
    ),
}


def snapshot(agent: Agent) -> tuple:
    return (
        sorted(agent.tool_bindings.values_list("key", "description_override")),
        sorted(agent.subagent_bindings.values_list("key", "description_override")),
    )


@pytest.mark.parametrize(("policy", "membership", "descriptions"), POLICIES)
@pytest.mark.parametrize("write", list(WRITES))
def test_each_policy_form_decides_each_binding_write_on_a_code_agent(
    client_for, editor, policy, membership, descriptions, write
):
    agent = code_agent_with(policy)
    method, url, body = WRITES[write]
    before = snapshot(agent)

    response = getattr(client_for(editor), method)(url, body, format="json")

    allowed = descriptions if write.startswith("describe") else membership
    agent.refresh_from_db()
    if allowed:
        assert response.status_code in (200, 201, 204), response.content
        assert snapshot(agent) != before
        # The change is an editor save: version bumped, one revision by the editor.
        assert agent.version == 2
        revision = Revision.objects.get(agent=agent)
        assert revision.author == editor
        assert revision.version == 2
        field = "studio_subagents" if "sub-agent" in write else "studio_tools"
        assert revision.fields == [field]
        assert revision.before[field] != revision.after[field]
    else:
        assert response.status_code == 403, response.content
        assert response.json()["code"] == "editor_policy"
        forbidden = "tool descriptions" if write.startswith("describe") else "tool membership"
        assert forbidden in response.json()["detail"]
        assert "editor-agent" in response.json()["detail"]
        assert snapshot(agent) == before
        assert agent.version == 1
        assert not Revision.objects.filter(agent=agent).exists()


def test_the_refusal_names_the_policy_that_forbids_it(client_for, editor):
    code_agent_with({"tools": {"description": True}})

    response = client_for(editor).post(
        "/api/agents/editor-agent/tools/",
        {"tool": "editor_test_convert", "key": "c2"},
        format="json",
    )

    assert response.status_code == 403
    assert response.json()["detail"] == (
        "Agent 'editor-agent' is defined in code and its editor policy "
        '(editor={"tools": {"description": true}}) keeps tool membership (adding, removing or '
        "changing its tools and sub-agents) in code."
    )
    assert response.json()["forbidden"] == ["tools"]


def test_a_description_change_on_a_descriptions_only_agent_may_not_also_move_the_tool(
    client_for, editor
):
    agent = code_agent_with({"tools": {"description": True}})

    response = client_for(editor).patch(
        "/api/agents/editor-agent/tools/extra/",
        {"description_override": "Mine.", "key": "renamed"},
        format="json",
    )

    assert response.status_code == 403
    assert tool_keys(agent) >= {"extra"}
    assert agent.tool_bindings.get(key="extra").description_override == ""


def test_sending_unchanged_membership_fields_with_a_description_is_allowed(client_for, editor):
    agent = code_agent_with({"tools": {"description": True}})

    response = client_for(editor).put(
        "/api/agents/editor-agent/tools/extra/",
        {"tool": "editor_test_extra", "description_override": "Mine."},
        format="json",
    )

    assert response.status_code == 200, response.json()
    assert agent.tool_bindings.get(key="extra").description_override == "Mine."


@pytest.mark.parametrize("write", list(WRITES))
def test_without_the_change_permission_a_code_agents_bindings_are_refused(client_for, owner, write):
    agent = code_agent_with(None)
    method, url, body = WRITES[write]
    before = snapshot(agent)

    response = getattr(client_for(owner), method)(url, body, format="json")

    assert response.status_code == 403
    assert response.json()["code"] == "permission_denied"
    assert "agents_core.change_agent" in response.json()["detail"]
    assert snapshot(agent) == before
    assert not Revision.objects.filter(agent=agent).exists()


def test_studio_agents_are_unaffected_their_owner_does_everything_without_permissions(
    client_for, owner
):
    AgentFactory(slug="mine", owner=owner)
    AgentFactory(slug="child", owner=owner)
    ToolFactory(name="my_tool", owner=owner)
    client = client_for(owner)

    assert (
        client.post("/api/agents/mine/tools/", {"tool": "my_tool"}, format="json").status_code
        == 201
    )
    assert (
        client.patch(
            "/api/agents/mine/tools/my_tool/", {"description_override": "Mine."}, format="json"
        ).status_code
        == 200
    )
    assert (
        client.post("/api/agents/mine/subagents/", {"agent": "child"}, format="json").status_code
        == 201
    )
    assert (
        client.patch(
            "/api/agents/mine/subagents/child/", {"description_override": "Helps."}, format="json"
        ).status_code
        == 200
    )
    assert client.delete("/api/agents/mine/subagents/child/").status_code == 204
    assert client.delete("/api/agents/mine/tools/my_tool/").status_code == 204


def test_a_binding_change_makes_an_open_editor_page_save_stale(client_for, editor):
    """The version is the editor's: a REST change after the page opened is not overwritten."""
    code_agent_with(None)
    client = client_for(editor)
    client.post(
        "/api/agents/editor-agent/tools/",
        {"tool": "editor_test_convert", "key": "c2"},
        format="json",
    )

    stale = client.patch(
        "/api/agents/editor-agent/overrides/", {"instructions": "New.", "version": 1}, format="json"
    )

    assert stale.status_code == 409
    assert stale.json()["current"]["version"] == 2


def test_the_revision_of_a_binding_change_lists_and_diffs_like_any_other(client_for, editor):
    code_agent_with(None)
    client = client_for(editor)
    client.delete("/api/agents/editor-agent/tools/extra/")

    listed = client.get("/api/agents/editor-agent/revisions/").json()["results"]
    detail = client.get(f"/api/agents/editor-agent/revisions/{listed[0]['id']}/").json()

    assert [(r["author"], r["fields"]) for r in listed] == [("owner", ["studio_tools"])]
    assert "extra" in detail["before"]["studio_tools"]
    assert detail["after"]["studio_tools"] == {}
    assert detail["diff"]


def _restore_first_after_removing_extra(client, agent):
    """Save instructions (revision 1 records the studio bindings), remove the studio tool
    through the API, save again; then restore revision 1."""
    client.patch(
        "/api/agents/editor-agent/overrides/", {"instructions": "One.", "version": 1}, format="json"
    )
    first = Revision.objects.get(agent=agent)
    client.delete("/api/agents/editor-agent/tools/extra/")
    client.patch(
        "/api/agents/editor-agent/overrides/", {"instructions": "Two.", "version": 3}, format="json"
    )
    return first, lambda: client.post(
        f"/api/agents/editor-agent/revisions/{first.pk}/restore", {"version": 4}, format="json"
    )


def test_restoring_a_revision_restores_the_studio_bindings_it_recorded(client_for, editor):
    agent = code_agent_with(None)
    first, restore = _restore_first_after_removing_extra(client_for(editor), agent)

    restored = restore()

    assert restored.status_code == 200, restored.json()
    assert restored.json()["instructions"]["effective"] == "One."
    assert restored.json()["stripped"] == []
    binding = AgentTool.objects.get(agent=agent, key="extra")
    assert (binding.tool.name, binding.position, binding.source) == (
        "editor_test_extra",
        9,
        "studio",
    )
    revision = Revision.objects.get(agent=agent, kind="restore")
    assert revision.fields == ["instructions", "studio_tools"]
    assert revision.after["studio_tools"] == first.after["studio_tools"]


def test_restoring_a_revision_restores_a_removed_sub_agent(client_for, editor):
    agent = code_agent_with(None)
    client = client_for(editor)
    client.patch(
        "/api/agents/editor-agent/overrides/", {"instructions": "One.", "version": 1}, format="json"
    )
    first = Revision.objects.get(agent=agent)
    assert client.delete("/api/agents/editor-agent/subagents/aide/").status_code == 204

    restored = client.post(
        f"/api/agents/editor-agent/revisions/{first.pk}/restore", {"version": 3}, format="json"
    )

    assert restored.status_code == 200, restored.json()
    aide = SubAgent.objects.get(parent=agent, key="aide")
    assert (aide.child.slug, aide.source) == ("child-agent", "studio")
    assert Revision.objects.get(agent=agent, kind="restore").fields == ["studio_subagents"]


def test_a_policy_that_now_keeps_tools_in_code_leaves_them_and_says_so(client_for, editor):
    agent = code_agent_with(None)
    _, restore = _restore_first_after_removing_extra(client_for(editor), agent)
    sync(definition("editor-agent", editor={"instructions": True}), definition("child-agent"))

    restored = restore()

    assert restored.status_code == 200, restored.json()
    assert restored.json()["instructions"]["effective"] == "One."
    # The editor document's tool keys are code-owned now too: stripped and reported.
    assert restored.json()["stripped"] == [
        "studio_tools",
        "tool_descriptions",
        "tools_added",
        "tools_removed",
    ]
    assert "extra" not in tool_keys(agent)


def test_a_restore_that_needs_a_tool_that_is_gone_changes_nothing(client_for, editor):
    agent = code_agent_with(None)
    _, restore = _restore_first_after_removing_extra(client_for(editor), agent)
    Tool.objects.filter(name="editor_test_extra").delete()

    refused = restore()

    assert refused.status_code == 400, refused.json()
    assert "editor_test_extra" in str(refused.json())
    agent.refresh_from_db()
    assert agent.version == 4
    assert overrides.effective_instructions(agent) == "Two."
    assert not Revision.objects.filter(agent=agent, kind="restore").exists()


@pytest.mark.parametrize("method", ["post", "patch", "delete"])
def test_anonymous_binding_writes_on_a_code_agent_are_refused(method):
    agent = code_agent_with(None)
    url = "/api/agents/editor-agent/tools/" + ("" if method == "post" else "extra/")

    response = getattr(APIClient(), method)(url, {"tool": "editor_test_convert"}, format="json")

    assert response.status_code == 401
    assert Agent.objects.get(pk=agent.pk).version == 1


@pytest.mark.parametrize(("policy", "membership", "descriptions"), POLICIES)
def test_the_run_applies_the_same_policy_to_studio_sub_agents_of_a_code_agent(
    policy, membership, descriptions
):
    agent = code_agent_with(policy)
    agent.subagent_bindings.filter(key="aide").update(description_override="Helps.")
    agent = Agent.objects.get(pk=agent.pk)

    bindings = overrides.effective_subagent_bindings(agent)

    assert [b.key for b in bindings] == (["aide"] if membership else [])
    binding = agent.subagent_bindings.get(key="aide")
    expected = "Helps." if descriptions else binding.child.description or binding.child.name
    assert overrides.effective_subagent_description(binding) == expected
