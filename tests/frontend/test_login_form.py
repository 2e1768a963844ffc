"""The login form in a real browser: the one test that signs in through it (every other
browser test starts signed in, tests/conftest.py browser_login)."""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

from tests.conftest import browser_login_form

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_the_form_signs_in_and_leads_to_the_home_page(studio_server, browser, owner):
    page = browser_login_form(browser, studio_server, "owner")
    assert page.url == f"{studio_server}/"
    page.wait_for_selector("body[data-home-ready='1']")
    # The session it made opens a page that needs one.
    response = page.goto(f"{studio_server}/tools/")
    assert response is not None and response.status == 200
    assert page.url == f"{studio_server}/tools/"


def test_a_wrong_password_stays_on_the_form_and_opens_nothing(studio_server, browser, owner):
    context = browser.new_context()
    page = context.new_page()
    page.goto(f"{studio_server}/accounts/login/")
    page.fill("input[name=username]", "owner")
    page.fill("input[name=password]", "not-the-password")
    page.click("button[type=submit]")
    expect(page.locator("p.error[role=alert]")).to_contain_text("didn't match")
    assert "/accounts/login/" in page.url
    page.goto(f"{studio_server}/tools/")
    assert "/accounts/login/" in page.url
    context.close()
