"""The studio's agent editor in headless Chromium: two editors, a lock, a stale save."""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import expect

from agents_core import overrides
from agents_core.models import Agent, EditLock, Revision
from tests.conftest import browser_login

from .conftest import INSTRUCTIONS

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

SHOTS = "/tmp/editor-shots"


@pytest.fixture
def shots(tmp_path_factory):
    import os

    os.makedirs(SHOTS, exist_ok=True)
    return SHOTS


def test_two_editors_one_lock_and_a_stale_save_refused_with_the_current_text(
    studio_server, browser, code_agent, editor, admin_user, shots
):
    url = f"{studio_server}/agents/{code_agent.slug}/edit/"
    first = browser_login(browser, studio_server, "owner")
    first.goto(url)
    expect(first.locator("#lockbar")).to_have_attribute("data-mode", "mine")
    expect(first.locator("#field-instructions")).to_be_enabled()
    expect(first.locator("#instructions-badge")).to_have_text("From code")

    second = browser_login(browser, studio_server, "admin")
    second.on("dialog", lambda dialog: dialog.accept())
    second.goto(url)
    expect(second.locator("#lockbar")).to_have_attribute("data-mode", "other")
    expect(second.locator("#lock-text")).to_contain_text("Locked by owner")
    expect(second.locator("#field-instructions")).to_be_disabled()
    expect(second.locator("#lock-break")).to_be_visible()
    second.screenshot(path=f"{shots}/1-second-sees-it-locked.png", full_page=True)

    first.fill("#field-instructions", INSTRUCTIONS + "\nAlways answer in French.")
    first.click("#save")
    expect(first.locator("#save-status")).to_have_text("Saved · version 2")
    expect(first.locator("#instructions-badge")).to_have_text("Overridden")
    expect(first.locator("#instructions-code")).to_have_text(INSTRUCTIONS)
    expect(first.locator(".revision")).to_have_count(1)
    first.screenshot(path=f"{shots}/2-first-saved.png", full_page=True)

    # The second editor breaks the lock and edits the text it loaded (version 1).
    second.click("#lock-break")
    expect(second.locator("#lockbar")).to_have_attribute("data-mode", "mine")
    expect(second.locator("#field-instructions")).to_be_enabled()
    # It is told the agent changed meanwhile, but keeps working on what it has.
    expect(second.locator("#stale-note")).to_contain_text("version 2 by owner")
    second.fill("#field-instructions", INSTRUCTIONS.replace("briefly", "at length"))
    second.click("#save")
    conflict = second.locator("#conflict")
    expect(conflict).to_be_visible()
    expect(second.locator("#conflict-current")).to_contain_text("Always answer in French.")
    expect(second.locator("#conflict-detail")).to_contain_text("owner saved version 2")
    expect(second.locator("#conflict-diff .diff-insert")).to_contain_text(["Answer at length."])
    expect(second.locator("#conflict-note")).to_contain_text("keeps both")
    second.screenshot(path=f"{shots}/3-stale-save-refused.png", full_page=True)

    agent = Agent.objects.get(pk=code_agent.pk)
    assert agent.version == 2
    assert "French" in overrides.effective_instructions(agent)
    broken = EditLock.objects.get(holder__username="owner")
    assert (broken.end_reason, broken.ended_by.username) == ("broken", "admin")

    # Re-applying puts the second editor's text on top of version 2; saving then works.
    second.click("#conflict-reapply")
    expect(conflict).to_be_hidden()
    expect(second.locator("#version-text")).to_contain_text("Version 2")
    expect(second.locator("#field-instructions")).to_have_value(
        "You are a careful assistant.\nAnswer at length.\nCite your tools.\n"
        "Always answer in French."
    )
    second.click("#save")
    expect(second.locator("#save-status")).to_have_text("Saved · version 3")
    assert Revision.objects.filter(agent=agent).count() == 2
    final = overrides.effective_instructions(Agent.objects.get(pk=agent.pk))
    assert "at length" in final and "French" in final  # nothing lost
    first.context.close()
    second.context.close()


def test_revisions_show_a_line_diff_and_restore_a_version(
    studio_server, browser, code_agent, editor, shots
):
    page = browser_login(browser, studio_server, "owner")
    page.goto(f"{studio_server}/agents/{code_agent.slug}/edit/")
    expect(page.locator("#lockbar")).to_have_attribute("data-mode", "mine")
    page.fill("#field-instructions", "Line one.\nLine two.")
    page.locator(".tool-row[data-key=lookup] textarea").fill("Find words in the dictionary.")
    page.click("#save")
    expect(page.locator("#save-status")).to_have_text("Saved · version 2")
    expect(page.locator(".tool-row[data-key=lookup] .badge")).to_have_text("Overridden")
    page.fill("#field-instructions", "Line one.\nLine 2, edited.")
    page.click("#save")
    expect(page.locator("#save-status")).to_have_text("Saved · version 3")

    page.locator(".revision", has_text="v3").click()
    expect(page.locator("#revision-diff .diff-delete")).to_have_text(["2−Line two."])
    expect(page.locator("#revision-diff .diff-insert")).to_have_text(["2+Line 2, edited."])
    page.screenshot(path=f"{shots}/4-revision-diff.png", full_page=True)

    # Restore and reset ask first; a dismissed question changes nothing.
    asked = []
    page.once("dialog", lambda dialog: (asked.append(dialog.message), dialog.dismiss()))
    page.locator(".revision", has_text="v2").click()
    page.click("#revision-restore")
    expect(page.locator(".revision")).to_have_count(2)
    assert asked and "Restore version 2?" in asked[0]
    assert Agent.objects.get(pk=code_agent.pk).version == 3
    page.once("dialog", lambda dialog: dialog.accept())
    page.click("#revision-restore")
    expect(page.locator("#save-status")).to_have_text("Restored version 2 as version 4.")
    expect(page.locator("#field-instructions")).to_have_value("Line one.\nLine two.")

    reset = page.locator(".tool-row[data-key=lookup]").get_by_text("Reset to code")
    page.once("dialog", lambda dialog: (asked.append(dialog.message), dialog.dismiss()))
    reset.click()
    expect(page.locator(".revision")).to_have_count(3)
    assert "Reset the description of lookup to the code value?" in asked[1]
    assert Agent.objects.get(pk=code_agent.pk).version == 4
    page.once("dialog", lambda dialog: dialog.accept())
    reset.click()
    expect(page.locator("#save-status")).to_have_text("Reset to code · version 5")
    expect(page.locator(".tool-row[data-key=lookup] textarea")).to_have_value("Looks a word up.")
    page.screenshot(path=f"{shots}/5-after-reset.png", full_page=True)
    page.context.close()


def test_the_home_page_links_each_agent_to_its_editor(studio_server, browser, code_agent, editor):
    page = browser_login(browser, studio_server, "owner")
    page.goto(f"{studio_server}/")
    card = page.locator(f".agent-card[data-agent={code_agent.slug}]")
    card.get_by_role("link", name="Edit", exact=True).click()
    expect(page.locator("#editor-title")).to_have_text(code_agent.name)
    page.context.close()


def test_a_user_without_the_change_permission_gets_a_read_only_page(
    studio_server, browser, code_agent, outsider
):
    page = browser_login(browser, studio_server, "outsider")
    page.goto(f"{studio_server}/agents/{code_agent.slug}/edit/")
    expect(page.locator("#lock-text")).to_have_text("You can read this agent but not edit it.")
    expect(page.locator("#field-instructions")).to_be_disabled()
    expect(page.locator("#save")).to_be_disabled()
    assert not EditLock.objects.exists()
    page.context.close()


def test_the_admin_change_page_edits_under_the_lock_in_chromium(
    studio_server, browser, code_agent_factory, editor, admin_user, shots
):
    from .test_admin import staff

    agent = code_agent_factory(editor={"instructions": True})
    staff(editor)
    url = f"{studio_server}/admin/agents_core/agent/{agent.pk}/change/"
    first = browser_login(browser, studio_server, "owner")
    first.goto(url)
    expect(first.locator("#editor-lock")).to_contain_text("Locked by owner")
    expect(first.locator("textarea[name=editor_instructions]")).to_be_enabled()
    expect(first.locator("textarea[name=editor_tool__lookup]")).to_be_disabled()

    second = browser_login(browser, studio_server, "admin")
    second.goto(url)
    # The admin's stylesheet capitalizes a message's first letter.
    expect(second.locator(".messagelist")).to_contain_text(
        re.compile("owner is editing this agent", re.IGNORECASE)
    )
    expect(second.locator("textarea[name=editor_instructions]")).to_be_disabled()
    expect(second.locator("#editor-break-lock")).to_be_visible()
    second.screenshot(path=f"{shots}/6-admin-locked.png", full_page=True)

    first.fill("textarea[name=editor_instructions]", "Edited in the admin.")
    first.click("input[name=_continue]")
    expect(first.locator(".messagelist")).to_contain_text("was changed successfully")
    expect(first.locator("textarea[name=editor_instructions]")).to_have_value(
        "Edited in the admin."
    )
    first.screenshot(path=f"{shots}/7-admin-saved.png", full_page=True)
    # The page that was left released only its own lock session: this one still holds one.
    status = first.evaluate(
        """async () => {
            const badge = document.getElementById("editor-lock");
            const csrf = document.querySelector("input[name=csrfmiddlewaretoken]").value;
            const headers = {"X-CSRFToken": csrf};
            const r = await fetch(badge.dataset.lockUrl, {method: "PUT", headers});
            return r.status;
        }"""
    )
    assert status == 200
    assert EditLock.objects.get(agent=agent, ended_at__isnull=True).holder == editor
    assert (
        overrides.effective_instructions(Agent.objects.get(pk=agent.pk)) == "Edited in the admin."
    )
    first.context.close()
    second.context.close()


def test_an_expired_lock_can_be_taken_over_from_the_page(
    studio_server, browser, code_agent, editor, second_editor, shots
):
    from datetime import timedelta

    from django.utils import timezone

    url = f"{studio_server}/agents/{code_agent.slug}/edit/"
    first = browser_login(browser, studio_server, "owner")
    first.goto(url)
    expect(first.locator("#lockbar")).to_have_attribute("data-mode", "mine")
    second = browser_login(browser, studio_server, "teammate")
    second.goto(url)
    expect(second.locator("#lockbar")).to_have_attribute("data-mode", "other")
    expect(second.locator("#lock-break")).to_be_hidden()  # no break permission
    expect(second.locator("#lock-take")).to_be_hidden()

    # The first editor's page goes offline (the laptop slept): no renewal, no release.
    first.context.set_offline(True)
    EditLock.objects.filter(holder=editor).update(expires_at=timezone.now() - timedelta(seconds=1))
    # The second page polls the lock and offers to take it over.
    expect(second.locator("#lockbar")).to_have_attribute("data-mode", "expired", timeout=30_000)
    second.screenshot(path=f"{shots}/8-expired-lock.png", full_page=True)
    second.click("#lock-take")
    expect(second.locator("#lockbar")).to_have_attribute("data-mode", "mine")
    expect(second.locator("#field-instructions")).to_be_enabled()
    old = EditLock.objects.get(holder=editor)
    assert (old.end_reason, old.ended_by_id) == ("taken_over", second_editor.pk)
    first.context.close()
    second.context.close()


def test_a_studio_agent_owner_edits_name_model_and_instructions(
    studio_server, browser, code_agent, owner
):
    agent = Agent.objects.create(
        slug="my-helper",
        name="My helper",
        model="studio/scripted",
        instructions="Help.",
        owner=owner,
    )
    page = browser_login(browser, studio_server, "owner")
    page.goto(f"{studio_server}/agents/{agent.slug}/edit/")
    expect(page.locator("#lockbar")).to_have_attribute("data-mode", "mine")
    expect(page.locator("#studio-fields")).to_be_visible()
    page.fill("#field-name", "My better helper")
    page.fill("#field-instructions", "Help, kindly.")
    page.click("#save")
    expect(page.locator("#save-status")).to_have_text("Saved · version 2")
    expect(page.locator("#editor-title")).to_have_text("My better helper")
    agent.refresh_from_db()
    assert (agent.name, agent.instructions) == ("My better helper", "Help, kindly.")
    page.context.close()


def test_tool_membership_is_edited_on_the_page_when_the_policy_opens_it(
    studio_server, browser, code_agent_factory, editor
):
    agent = code_agent_factory(editor={"tools": True})
    page = browser_login(browser, studio_server, "owner")
    page.goto(f"{studio_server}/agents/{agent.slug}/edit/")
    expect(page.locator("#lockbar")).to_have_attribute("data-mode", "mine")
    expect(page.locator("#field-instructions")).to_be_disabled()  # code owns instructions
    page.locator(".tool-row[data-key=convert] input[type=checkbox]").uncheck()
    page.select_option("#add-tool-name", "editor_test_extra")
    page.fill("#add-tool-key", "extra")
    page.click("#add-tool-button")
    expect(page.locator(".tool-row[data-key=extra] .badge")).to_have_text("New · not saved yet")
    page.locator(".tool-row[data-key=extra] textarea").fill("Use for extras.")
    page.click("#save")
    expect(page.locator("#save-status")).to_have_text("Saved · version 2")
    expect(page.locator(".tool-row[data-key=convert] .badge")).to_have_text("Removed")
    expect(page.locator(".tool-row[data-key=extra] .badge")).to_have_text("Added in the studio")
    expect(page.locator("#stale-note")).to_be_hidden()
    expect(page.locator("#add-tool")).to_be_visible()
    bindings = overrides.effective_tool_bindings(Agent.objects.get(pk=agent.pk))
    assert [b.key for b in bindings] == ["lookup", "extra"]
    assert overrides.effective_tool_description(bindings[1]) == "Use for extras."
    page.screenshot(path=f"{SHOTS}/9-membership.png", full_page=True)
    page.context.close()
