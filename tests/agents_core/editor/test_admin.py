"""The admin's agent change page under the editor policy, the lock and versions."""

from __future__ import annotations

import pytest
from django.test import Client
from django.utils import timezone

from agents_core import overrides
from agents_core.models import Agent, EditLock, Revision

from .conftest import INSTRUCTIONS, grant
from .test_policy import FORMS


def staff(user, *perms: str):
    user.is_staff = True
    user.save(update_fields=["is_staff"])
    return grant(user, "change_agent", "view_agent", *perms)


def client_for(user) -> Client:
    client = Client()
    client.force_login(user)
    return client


def change_url(agent: Agent) -> str:
    return f"/admin/agents_core/agent/{agent.pk}/change/"


def form_data(response, **changes) -> dict:
    """What the browser would post back: the main form's fields and every inline formset."""
    form = response.context["adminform"].form
    data = {}
    for name, field in form.fields.items():
        if field.disabled:
            continue
        value = form[name].value()
        if isinstance(value, bool):
            if value:
                data[name] = "on"
        elif value is not None:
            data[name] = value
    for inline in response.context["inline_admin_formsets"]:
        formset = inline.formset
        for name, field in formset.management_form.fields.items():
            data[f"{formset.prefix}-{name}"] = formset.management_form[name].value()
        for sub in formset.forms:
            for name in sub.fields:
                value = sub[name].value()
                if value is not None and not isinstance(value, bool):
                    data[sub.add_prefix(name)] = value
    data.update(changes)
    return data


def fields_of(response) -> dict:
    return response.context["adminform"].form.fields


@pytest.fixture
def admin_editor(editor):
    return staff(editor)


def test_opening_the_page_takes_the_lock_and_shows_it(code_agent, admin_editor):
    response = client_for(admin_editor).get(change_url(code_agent))
    assert response.status_code == 200
    lock = EditLock.objects.get(agent=code_agent, ended_at__isnull=True)
    assert lock.holder == admin_editor
    html = response.content.decode()
    assert "Locked by <strong>owner</strong> (you, in this page)" in html
    assert f"data-lock-id='{lock.pk}'" in html
    assert "editor-break-lock" not in html  # nobody breaks their own lock
    assert "agents_core/admin_editor.js" in response.content.decode()


@pytest.mark.parametrize("form", list(FORMS))
def test_the_policy_decides_which_editor_fields_are_editable(
    code_agent_factory, admin_editor, form
):
    policy, editable = FORMS[form]
    agent = code_agent_factory(editor=policy)
    response = client_for(admin_editor).get(change_url(agent))
    fields = fields_of(response)
    assert fields["editor_instructions"].disabled == ("instructions" not in editable)
    for key in ("lookup", "convert"):
        assert fields[f"editor_tool__{key}"].disabled == ("tool_descriptions" not in editable)
    # id, name, description and model of a code agent are never form inputs here.
    for name in ("slug", "name", "description", "model", "instructions"):
        assert name not in fields
    readonly = response.context["adminform"].readonly_fields
    assert {"slug", "name", "model"} <= set(readonly)


@pytest.mark.parametrize("form", list(FORMS))
def test_a_save_through_the_admin_obeys_the_policy(code_agent_factory, admin_editor, form):
    policy, editable = FORMS[form]
    agent = code_agent_factory(editor=policy)
    client = client_for(admin_editor)
    page = client.get(change_url(agent))
    data = form_data(
        page,
        editor_instructions="Admin text.",
        editor_tool__lookup="Admin lookup.",
        name="Hacked",
        model="openai/gpt-4o",
        slug="hacked",
    )
    response = client.post(change_url(agent), data)
    assert response.status_code == 302, response.context["adminform"].form.errors
    agent = Agent.objects.get(pk=agent.pk)
    lookup = next(b for b in overrides.effective_tool_bindings(agent) if b.key == "lookup")
    assert (overrides.effective_instructions(agent) == "Admin text.") == (
        "instructions" in editable
    )
    assert (overrides.effective_tool_description(lookup) == "Admin lookup.") == (
        "tool_descriptions" in editable
    )
    assert (agent.slug, agent.name, agent.model) == (
        "editor-agent",
        "Agent editor-agent",
        "studio/scripted",
    )
    assert agent.version == (2 if editable else 1)


def test_a_stale_admin_save_is_refused_with_the_current_text(
    code_agent, admin_editor, second_editor
):
    client = client_for(admin_editor)
    page = client.get(change_url(code_agent))
    # The page's lock expires (the laptop slept) and someone else saves meanwhile: the
    # version check refuses the page's save when it comes back.
    from agents_core.editor.services import revisions

    EditLock.objects.filter(holder=admin_editor).update(expires_at=timezone.now())
    revisions.override_save(
        lock_id=None,
        agent=code_agent,
        user=second_editor,
        version=1,
        data={"instructions": "Teammate's text."},
    )
    response = client.post(
        change_url(code_agent), form_data(page, editor_instructions="Owner's text.")
    )
    assert response.status_code == 200
    html = response.content.decode()
    assert "Not saved: teammate changed this agent" in html
    assert "Teammate&#x27;s text." in html
    assert "Owner&#x27;s text." in html  # the user's own text is still in the form
    agent = Agent.objects.get(pk=code_agent.pk)
    assert overrides.effective_instructions(agent) == "Teammate's text."
    assert agent.version == 2
    # Submitting again goes on top of version 2, knowingly.
    again = client.post(change_url(code_agent), form_data(response))
    assert again.status_code == 302
    assert overrides.effective_instructions(Agent.objects.get(pk=code_agent.pk)) == "Owner's text."
    assert Revision.objects.filter(agent=code_agent).count() == 2


def test_reset_to_code_from_the_admin(code_agent, admin_editor):
    client = client_for(admin_editor)
    page = client.get(change_url(code_agent))
    client.post(change_url(code_agent), form_data(page, editor_instructions="Override."))
    page = client.get(change_url(code_agent))
    assert "editor_instructions_reset" in fields_of(page)
    client.post(change_url(code_agent), form_data(page, editor_instructions_reset="on"))
    agent = Agent.objects.get(pk=code_agent.pk)
    assert overrides.effective_instructions(agent) == INSTRUCTIONS
    assert Revision.objects.filter(agent=agent).first().after["instructions"] is None


def test_a_second_admin_sees_the_lock_and_a_read_only_editor(
    code_agent, admin_editor, second_editor
):
    client_for(admin_editor).get(change_url(code_agent))
    other = staff(second_editor)
    response = client_for(other).get(change_url(code_agent))
    assert fields_of(response)["editor_instructions"].disabled
    messages = [str(m) for m in response.context["messages"]]
    assert any("owner is editing this agent" in m and "read-only" in m for m in messages)
    html = response.content.decode()
    assert "(you)" not in html
    assert "editor-break-lock" not in html  # no break permission
    breaker = grant(other, "break_editlock")
    assert "editor-break-lock" in client_for(breaker).get(change_url(code_agent)).content.decode()


def test_breaking_the_lock_in_the_admin_needs_the_permission(
    code_agent, admin_editor, second_editor
):
    client_for(admin_editor).get(change_url(code_agent))
    url = f"/admin/agents_core/agent/{code_agent.pk}/editor/break-lock/"
    other = staff(second_editor)
    client_for(other).post(url)
    assert EditLock.objects.get(ended_at__isnull=True).holder == admin_editor
    breaker = grant(other, "break_editlock")
    response = client_for(breaker).post(url)
    assert response.status_code == 302
    assert EditLock.objects.get(ended_at__isnull=True).holder == breaker
    assert EditLock.objects.get(holder=admin_editor).end_reason == "broken"


def test_a_studio_agent_is_edited_through_the_editor_with_a_revision(code_agent, owner):
    user = staff(owner)
    agent = Agent.objects.create(
        slug="studio-admin",
        name="Old name",
        model="studio/scripted",
        instructions="Old.",
        owner=user,
    )
    client = client_for(user)
    page = client.get(change_url(agent))
    assert not fields_of(page)["editor_name"].disabled
    response = client.post(
        change_url(agent), form_data(page, editor_name="New name", editor_instructions="New.")
    )
    assert response.status_code == 302, response.context["adminform"].form.errors
    agent.refresh_from_db()
    assert (agent.name, agent.instructions, agent.version) == ("New name", "New.", 2)
    assert Revision.objects.get(agent=agent).fields == ["instructions", "name"]


def test_anonymous_and_non_staff_users_cannot_open_the_change_page(code_agent, outsider):
    assert Client().get(change_url(code_agent)).status_code == 302
    assert client_for(outsider).get(change_url(code_agent)).status_code == 302
    assert not EditLock.objects.exists()


def test_a_studio_agents_settings_and_inline_tools_edited_in_the_admin_are_a_revision(
    code_agent, owner
):
    from agents_core.models import AgentTool
    from tests.tools_app.factories import ToolFactory

    user = staff(owner, "add_agenttool", "change_agenttool", "view_agenttool")
    tool = ToolFactory(name="admin_inline_tool", owner=user)
    agent = Agent.objects.create(
        slug="studio-inline",
        name="Inline",
        model="studio/scripted",
        instructions="Same.",
        owner=user,
    )
    client = client_for(user)
    page = client.get(change_url(agent))
    data = form_data(
        page,
        metadata='{"team": "b"}',
        **{
            "tool_bindings-TOTAL_FORMS": "1",
            "tool_bindings-0-key": "helper",
            "tool_bindings-0-tool": str(tool.pk),
            "tool_bindings-0-position": "0",
            "tool_bindings-0-agent": str(agent.pk),
        },
    )
    response = client.post(change_url(agent), data)

    assert response.status_code == 302, response.context["adminform"].form.errors
    agent.refresh_from_db()
    assert agent.metadata == {"team": "b"} and agent.version == 2
    assert AgentTool.objects.get(agent=agent).key == "helper"
    revision = Revision.objects.get(agent=agent)
    assert revision.fields == ["metadata", "tools"]
    assert (revision.before["tools"], revision.after["tools"]) == ({}, {"helper": tool.name})

    # Saving the page again unchanged records nothing.
    again = client.post(change_url(agent), form_data(client.get(change_url(agent))))
    assert again.status_code == 302
    assert Revision.objects.filter(agent=agent).count() == 1


def test_a_change_no_revision_records_is_still_saved(code_agent, owner, outsider):
    """The owner is not part of a revision: changing only it records nothing, and is kept."""
    user = staff(owner)
    agent = Agent.objects.create(
        slug="studio-owner", name="Owned", model="studio/scripted", instructions="Same.", owner=user
    )
    client = client_for(user)
    response = client.post(
        change_url(agent), form_data(client.get(change_url(agent)), owner=str(outsider.pk))
    )

    assert response.status_code == 302, response.context["adminform"].form.errors
    agent.refresh_from_db()
    assert agent.owner == outsider
    assert not Revision.objects.filter(agent=agent).exists()


LISTED = ["You are a careful assistant.", "Answer briefly."]


def _holder_overrides_lookup(agent: Agent, holder) -> Client:
    """The holder opens the change page (taking the lock), overrides the lookup tool's
    description, and opens the page again (a new lock session, still live)."""
    client = client_for(holder)
    page = client.get(change_url(agent))
    saved = client.post(
        change_url(agent),
        form_data(page, editor_tool__lookup="The holder's description.", _continue="1"),
    )
    assert saved.status_code == 302, saved.context["adminform"].form.errors
    client.get(saved["Location"])
    return client


def _lookup_description(agent: Agent) -> str:
    agent = Agent.objects.get(pk=agent.pk)
    lookup = next(b for b in overrides.effective_tool_bindings(agent) if b.key == "lookup")
    return overrides.effective_tool_description(lookup)


def test_a_locked_out_user_gets_a_read_only_page_and_their_post_writes_nothing(
    code_agent_factory, admin_editor, second_editor
):
    agent = code_agent_factory(instructions=LISTED)
    _holder_overrides_lookup(agent, admin_editor)
    assert Agent.objects.get(pk=agent.pk).version == 2
    other = client_for(staff(second_editor))

    page = other.get(change_url(agent))
    fields = fields_of(page)
    assert all(fields[name].disabled for name in ("editor_instructions", "editor_tool__lookup"))
    html = page.content.decode()
    assert 'name="_save" disabled' in html and 'name="_continue" disabled' in html
    assert "Read-only: owner is editing this agent" in html

    # What the browser sends (disabled fields are not sent), then a forged form that
    # sends every field, twice: nothing is written, and the page stays read-only.
    forged = {
        "editor_instructions": "",
        "editor_instructions_format": "text",
        "editor_tool__lookup": "",
        "editor_tool__convert": "Forged.",
        "editor_lock": str(EditLock.objects.get(ended_at__isnull=True).pk),
    }
    for data in (form_data(page), form_data(page, **forged), form_data(page, **forged)):
        response = other.post(change_url(agent), data)
        assert response.status_code == 200
        form = response.context["adminform"].form
        errors = " ".join(form.non_field_errors())
        assert "owner is editing this agent" in errors and "Nothing was saved" in errors
        assert "Not valid JSON" not in response.content.decode()
        assert "changed successfully" not in response.content.decode()
        assert form.fields["editor_instructions"].disabled
        assert form.fields["editor_tool__lookup"].disabled
        # The fields show what is saved, never an empty or posted value.
        assert form["editor_tool__lookup"].value() == "The holder's description."
        assert (
            form["editor_instructions"].value()
            == '[\n  "You are a careful assistant.",\n  "Answer briefly."\n]'
        )
        assert 'name="_save" disabled' in response.content.decode()

    agent = Agent.objects.get(pk=agent.pk)
    assert agent.version == 2
    assert Revision.objects.filter(agent=agent).count() == 1
    assert _lookup_description(agent) == "The holder's description."
    assert overrides.effective_instructions(agent) == LISTED


def test_a_form_error_keeps_the_values_the_disabled_fields_and_the_lock_session(
    code_agent_factory, admin_editor
):
    agent = code_agent_factory(instructions=LISTED, editor={"instructions": True})
    client = client_for(admin_editor)
    page = client.get(change_url(agent))
    session = EditLock.objects.get(ended_at__isnull=True).pk
    response = client.post(change_url(agent), form_data(page, editor_instructions="[not json"))

    assert response.status_code == 200
    form = response.context["adminform"].form
    assert "Not valid JSON" in str(form.errors["editor_instructions"])
    assert form["editor_instructions"].value() == "[not json"
    assert not form.fields["editor_instructions"].disabled
    assert form.fields["editor_tool__lookup"].disabled  # code owns tool descriptions here
    assert form["editor_tool__lookup"].value() == "Looks a word up."
    assert form["editor_lock"].value() == str(session)
    assert f"data-lock-id='{session}'" in response.content.decode()
    assert Agent.objects.get(pk=agent.pk).version == 1

    again = client.post(change_url(agent), form_data(response, editor_instructions='["Fixed."]'))
    assert again.status_code == 302
    assert overrides.effective_instructions(Agent.objects.get(pk=agent.pk)) == ["Fixed."]


def test_the_same_user_in_a_second_tab_is_read_only_and_can_take_over(code_agent, admin_editor):
    client = client_for(admin_editor)
    client.get(change_url(code_agent))
    first = EditLock.objects.get(ended_at__isnull=True)

    second = client.get(change_url(code_agent))
    assert fields_of(second)["editor_instructions"].disabled
    html = second.content.decode()
    assert "you, in another tab or window" in html and "editor-take-over" in html
    assert f"data-other-id='{first.pk}'" in html

    taken = client.post(f"/admin/agents_core/agent/{code_agent.pk}/editor/take-over/")
    new = EditLock.objects.get(ended_at__isnull=True)
    assert taken["Location"].endswith(f"?editor_lock={new.pk}")
    first.refresh_from_db()
    assert first.end_reason == "replaced"
    page = client.get(taken["Location"])
    assert not fields_of(page)["editor_instructions"].disabled
    assert EditLock.objects.get(ended_at__isnull=True).pk == new.pk  # continued, not retaken
    # The first tab's save is refused now.
    stale = client.post(
        change_url(code_agent),
        {**form_data(page, editor_instructions="From the first tab."), "editor_lock": first.pk},
    )
    assert stale.status_code == 200
    assert "another tab or window" in " ".join(stale.context["adminform"].form.non_field_errors())
    assert overrides.effective_instructions(Agent.objects.get(pk=code_agent.pk)) == INSTRUCTIONS


def test_times_on_the_change_page_are_in_words(code_agent, admin_editor, second_editor):
    import re

    client_for(admin_editor).get(change_url(code_agent))
    html = client_for(staff(second_editor)).get(change_url(code_agent)).content.decode()
    messages = " ".join(re.findall(r'<li class="warning">(.*?)</li>', html, re.S))
    assert "owner is editing this agent (lock taken just now" in messages.lower()
    assert not re.search(r"\d{4}-\d\d-\d\d[ T]\d\d:\d\d", messages)


def test_the_bindings_own_admin_pages_never_write_a_code_agents_bindings(code_agent, admin_editor):
    from agents_core.models import AgentTool
    from tools_app.models import Tool

    user = staff(admin_editor, "add_agenttool", "change_agenttool", "delete_agenttool")
    extra = Tool.objects.get(name="editor_test_extra")
    binding = AgentTool.objects.create(agent=code_agent, tool=extra, key="extra")
    client = client_for(user)
    url = f"/admin/agents_core/agenttool/{binding.pk}/change/"
    assert 'name="_save"' not in client.get(url).content.decode()
    data = {"agent": code_agent.pk, "tool": extra.pk, "key": "extra", "position": 0}
    refused = client.post(url, {**data, "description_override": "Around the editor."})
    assert refused.status_code == 403
    added = client.post("/admin/agents_core/agenttool/add/", {**data, "key": "more"})
    assert added.status_code == 200
    assert "agent" in added.context["adminform"].form.errors
    deleted = client.post(f"/admin/agents_core/agenttool/{binding.pk}/delete/", {"post": "yes"})
    assert deleted.status_code == 403
    assert list(AgentTool.objects.filter(agent=code_agent, source="studio")) == [binding]
    assert AgentTool.objects.get(pk=binding.pk).description_override == ""
    assert Agent.objects.get(pk=code_agent.pk).version == 1


def test_a_studio_agents_binding_page_is_refused_while_another_session_holds_the_lock(
    code_agent, owner
):
    from agents_core.models import AgentTool
    from tools_app.models import Tool

    user = staff(owner, "add_agenttool", "change_agenttool", "view_agenttool")
    agent = Agent.objects.create(
        slug="studio-bound", name="Bound", model="studio/scripted", instructions=".", owner=user
    )
    extra = Tool.objects.get(name="editor_test_extra")
    binding = AgentTool.objects.create(agent=agent, tool=extra, key="extra")
    client = client_for(user)
    client.get(change_url(agent))  # the owner's agent page holds the lock
    url = f"/admin/agents_core/agenttool/{binding.pk}/change/"
    data = {"agent": agent.pk, "tool": extra.pk, "key": "extra", "position": 0}
    response = client.post(url, {**data, "description_override": "From another page."})
    assert response.status_code == 200
    assert "another tab or window" in " ".join(
        response.context["adminform"].form.non_field_errors()
    )
    assert AgentTool.objects.get(pk=binding.pk).description_override == ""
    EditLock.objects.update(ended_at=timezone.now())
    assert client.post(url, {**data, "description_override": "Now."}).status_code == 302
    assert AgentTool.objects.get(pk=binding.pk).description_override == "Now."
