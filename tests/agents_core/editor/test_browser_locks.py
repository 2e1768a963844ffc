"""Edit locks in headless Chromium: the admin page of a locked-out user, and two tabs of one
user on the studio's editor page."""

from __future__ import annotations

import os
import re

import pytest
from playwright.sync_api import expect

from agents_core import overrides
from agents_core.models import Agent, EditLock, Revision
from tests.conftest import browser_login, daphne_process

from .conftest import INSTRUCTIONS
from .test_admin import staff

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

SHOTS = "/tmp/editor-shots"
ISO = re.compile(r"\d{4}-\d\d-\d\d[T ]\d\d:\d\d")


@pytest.fixture
def shots() -> str:
    os.makedirs(SHOTS, exist_ok=True)
    return SHOTS


def lookup_description(agent: Agent) -> str:
    agent = Agent.objects.get(pk=agent.pk)
    lookup = next(b for b in overrides.effective_tool_bindings(agent) if b.key == "lookup")
    return overrides.effective_tool_description(lookup)


def test_the_admin_page_of_a_locked_out_user_is_read_only_and_a_forged_save_writes_nothing(
    studio_server, browser, code_agent, editor, second_editor, shots
):
    staff(editor)
    staff(second_editor)
    url = f"{studio_server}/admin/agents_core/agent/{code_agent.pk}/change/"
    holder = browser_login(browser, studio_server, "owner")
    holder.goto(url)
    holder.fill("textarea[name=editor_tool__lookup]", "The holder's description.")
    holder.click("input[name=_continue]")
    expect(holder.locator(".messagelist")).to_contain_text("was changed successfully")
    expect(holder.locator("#editor-lock")).to_contain_text("Locked by owner")
    assert Agent.objects.get(pk=code_agent.pk).version == 2

    other = browser_login(browser, studio_server, "teammate")
    other.goto(url)
    lookup = other.locator("textarea[name=editor_tool__lookup]")
    expect(lookup).to_be_disabled()
    expect(lookup).to_have_value("The holder's description.")
    expect(other.locator("textarea[name=editor_instructions]")).to_be_disabled()
    expect(other.locator("input[name=_save]")).to_be_disabled()
    expect(other.locator("input[name=_continue]")).to_be_disabled()
    expect(other.locator("#editor-read-only")).to_contain_text("owner is editing this agent")
    expect(other.locator("#editor-lock time")).to_have_text(re.compile(r"just now|min ago"))
    assert not ISO.search(other.locator("#editor-lock").inner_text())
    other.screenshot(path=f"{shots}/10-admin-locked-out.png", full_page=True)

    # A forged save: every field and button enabled, the fields emptied or changed, twice.
    for attempt in range(2):
        other.evaluate(
            """() => {
                for (const el of document.querySelectorAll("#agent_form [disabled]")) {
                    el.disabled = false;
                }
                document.querySelector("[name=editor_tool__lookup]").value = "";
                document.querySelector("[name=editor_instructions]").value = "Forged.";
            }"""
        )
        other.click("input[name=_save]")
        expect(other.locator(".errornote")).to_be_visible()
        expect(other.locator(".errorlist.nonfield")).to_contain_text("Nothing was saved")
        expect(other.locator(".messagelist")).to_have_count(0)  # no "changed successfully"
        expect(lookup).to_be_disabled()
        expect(lookup).to_have_value("The holder's description.")
        expect(other.locator("textarea[name=editor_instructions]")).to_have_value(INSTRUCTIONS)
        expect(other.locator("input[name=_save]")).to_be_disabled()
        agent = Agent.objects.get(pk=code_agent.pk)
        assert agent.version == 2, attempt
        assert lookup_description(agent) == "The holder's description."
        assert overrides.effective_instructions(agent) == INSTRUCTIONS
    other.screenshot(path=f"{shots}/11-admin-forged-save-refused.png", full_page=True)
    assert Revision.objects.filter(agent=code_agent).count() == 1
    assert EditLock.objects.get(ended_at__isnull=True).holder == editor
    holder.context.close()
    other.context.close()


def test_a_second_tab_is_told_the_first_holds_the_lock_and_takes_it_over(
    transactional_db, browser, code_agent, editor, shots
):
    # A short lock, so the first tab's heartbeat (every third of it) comes within the test.
    with daphne_process(STUDIO_EDITLOCK_SECONDS="6") as server:
        url = f"{server}/agents/{code_agent.slug}/edit/"
        first = browser_login(browser, server, "owner")
        first.goto(url)
        expect(first.locator("#lockbar")).to_have_attribute("data-mode", "mine")
        first.fill("#field-instructions", "Typed in the first tab.")

        second = first.context.new_page()
        second.goto(url)
        expect(second.locator("#lockbar")).to_have_attribute("data-mode", "yours")
        expect(second.locator("#lock-text")).to_contain_text("another tab or window")
        expect(second.locator("#field-instructions")).to_be_disabled()
        expect(second.locator("#save")).to_be_disabled()
        expect(second.locator("#lock-take")).to_have_text("Take over here")
        second.screenshot(path=f"{shots}/12-second-tab.png", full_page=True)
        expect(first.locator("#lockbar")).to_have_attribute("data-mode", "mine")

        second.click("#lock-take")
        expect(second.locator("#lockbar")).to_have_attribute("data-mode", "mine")
        expect(second.locator("#field-instructions")).to_be_enabled()
        # The first tab learns it at its next heartbeat, and keeps what was typed there.
        expect(first.locator("#lockbar")).to_have_attribute("data-mode", "yours", timeout=10_000)
        expect(first.locator("#field-instructions")).to_be_disabled()
        expect(first.locator("#field-instructions")).to_have_value("Typed in the first tab.")
        expect(first.locator("#save")).to_be_disabled()
        first.screenshot(path=f"{shots}/13-first-tab-after-takeover.png", full_page=True)
        replaced = EditLock.objects.exclude(ended_at__isnull=True).get()
        assert (replaced.end_reason, replaced.ended_by) == ("replaced", editor)

        second.fill("#field-instructions", "Saved from the second tab.")
        second.click("#save")
        expect(second.locator("#save-status")).to_have_text("Saved · version 2")
        first.context.close()


def test_a_tab_that_saves_after_losing_the_lock_is_refused_and_a_reload_keeps_the_lock(
    studio_server, browser, code_agent, editor
):
    url = f"{studio_server}/agents/{code_agent.slug}/edit/"
    first = browser_login(browser, studio_server, "owner")
    first.goto(url)
    expect(first.locator("#lockbar")).to_have_attribute("data-mode", "mine")
    # Reloading a tab is not a second tab: it continues with the lock.
    first.reload()
    expect(first.locator("#lockbar")).to_have_attribute("data-mode", "mine")
    assert EditLock.objects.filter(ended_at__isnull=True).count() == 1

    second = first.context.new_page()
    second.goto(url)
    expect(second.locator("#lockbar")).to_have_attribute("data-mode", "yours")
    second.click("#lock-take")
    expect(second.locator("#lockbar")).to_have_attribute("data-mode", "mine")

    # The first tab saves before its next heartbeat (every 30 s here): refused, read-only.
    first.fill("#field-instructions", "From the first tab.")
    first.click("#save")
    expect(first.locator("#lockbar")).to_have_attribute("data-mode", "yours")
    expect(first.locator("#save-status")).to_contain_text("another tab or window")
    expect(first.locator("#save-status")).to_contain_text("Nothing was saved")
    assert not ISO.search(first.locator("#save-status").inner_text())
    expect(first.locator("#field-instructions")).to_have_value("From the first tab.")
    expect(first.locator("#field-instructions")).to_be_disabled()
    agent = Agent.objects.get(pk=code_agent.pk)
    assert (agent.version, overrides.effective_instructions(agent)) == (1, INSTRUCTIONS)
    first.context.close()


def test_the_admin_asks_before_resetting_to_code_and_takes_over_from_a_second_tab(
    studio_server, browser, code_agent, editor
):
    staff(editor)
    url = f"{studio_server}/admin/agents_core/agent/{code_agent.pk}/change/"
    page = browser_login(browser, studio_server, "owner")
    page.goto(url)
    page.fill("textarea[name=editor_instructions]", "Overridden in the admin.")
    page.click("input[name=_continue]")
    expect(page.locator(".messagelist")).to_contain_text("was changed successfully")

    asked = []
    page.once("dialog", lambda dialog: (asked.append(dialog.message), dialog.dismiss()))
    page.check("input[name=editor_instructions_reset]")
    page.click("input[name=_continue]")
    expect(page.locator("input[name=editor_instructions_reset]")).to_be_checked()
    assert asked and "Reset the instructions to the code value?" in asked[0]
    assert Agent.objects.get(pk=code_agent.pk).version == 2
    page.once("dialog", lambda dialog: dialog.accept())
    page.click("input[name=_continue]")
    expect(page.locator("textarea[name=editor_instructions]")).to_have_value(INSTRUCTIONS)
    assert Agent.objects.get(pk=code_agent.pk).version == 3

    # A second tab of the same user is read-only and takes the lock over.
    second = page.context.new_page()
    second.goto(url)
    expect(second.locator("#editor-lock")).to_contain_text("you, in another tab or window")
    expect(second.locator("textarea[name=editor_instructions]")).to_be_disabled()
    second.click("#editor-take-over")
    expect(second.locator("#editor-lock")).to_contain_text("(you, in this page)")
    expect(second.locator("textarea[name=editor_instructions]")).to_be_enabled()
    # The session stays this tab's own: the page takes its id out of the URL once loaded.
    second.wait_for_function("() => !location.search.includes('editor_lock')")
    replaced = EditLock.objects.get(end_reason="replaced")
    assert replaced.ended_by == editor
    page.context.close()
