"""The providers page in headless Chromium: add a credential (the key never comes back),
test the connection against a local OpenAI-protocol server, search models with the picker;
the agent edit page mounts the same picker on its model field."""

from __future__ import annotations

import pytest

from tests.conftest import browser_login, daphne_process

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

KEY = "sk-page-key-abcdef7890"


@pytest.fixture
def server_with_model_base(transactional_db, openai_server):
    openai_server.key = KEY
    with daphne_process(STUDIO_MODEL_API_BASES=openai_server.origin) as url:
        yield url


def test_a_credential_is_added_tested_and_shown_as_a_hint(
    server_with_model_base, browser, owner, openai_server
):
    base = server_with_model_base
    page = browser_login(browser, base, "owner")
    page.click("#nav-providers")
    page.wait_for_selector("#credential-list li.muted")

    page.select_option("#credential-provider", "openai_compatible")
    page.fill("#credential-form input[name=name]", "box")
    page.fill("#credential-form input[name=api_key]", KEY)
    page.fill("#credential-form input[name=api_base]", openai_server.url)
    page.click("#credential-form button[type=submit]")

    card = page.locator(".provider-card[data-name='box']")
    card.wait_for()
    assert card.locator(".key-hint").inner_text() == "sk-…7890"
    assert KEY not in page.content()
    card.locator(".provider-test-model").fill("llama3")
    card.get_by_role("button", name="Test connection").click()
    result = card.locator(".provider-test-result.ok")
    result.wait_for()
    assert result.inner_text() == "openai/llama3 answered: “OK”"
    assert openai_server.requests[-1].body["model"] == "llama3"

    page.reload()
    page.wait_for_selector(".provider-card[data-name='box']")
    assert KEY not in page.content()
    # The picker offers the user's own server by its name.
    page.fill("#model-search", "bo")
    server = page.locator(".model-option[data-model='box/']")
    server.wait_for()
    assert "your server" in server.inner_text()


def test_the_picker_searches_litellms_list_and_keeps_free_text(
    server_with_model_base, browser, owner
):
    page = browser_login(browser, server_with_model_base, "owner")
    page.goto(f"{server_with_model_base}/providers/")
    page.fill("#model-search", "gpt-4o-mini")
    option = page.locator(".model-option[data-model='openai/gpt-4o-mini']")
    option.wait_for()
    assert "128k tokens" in option.inner_text() and "no key" in option.inner_text()
    option.dispatch_event("mousedown")
    assert page.input_value("#model-search") == "openai/gpt-4o-mini"

    page.fill("#model-search", "box/my-own-model")
    page.locator(".model-picker-status", has_text="used as it is").wait_for()
    assert page.input_value("#model-search") == "box/my-own-model"


def test_the_agent_edit_page_offers_the_picker_on_its_model_field(
    server_with_model_base, browser, owner
):
    from agents_core.models import Agent

    Agent.objects.create(slug="mine", name="Mine", model="studio/scripted", owner=owner)
    page = browser_login(browser, server_with_model_base, "owner")
    page.goto(f"{server_with_model_base}/agents/mine/edit/")
    page.wait_for_selector("#field-model[role=combobox]")
    page.fill("#field-model", "claude sonnet-4-5")
    option = page.locator(".model-option[data-model='anthropic/claude-sonnet-4-5']")
    option.wait_for()
    option.dispatch_event("mousedown")
    assert page.input_value("#field-model") == "anthropic/claude-sonnet-4-5"
