"""The connector catalogue in headless Chromium: pick Jira, fill the site URL and the
API token, add its operations, then run one of the new tools in the test console against
the local Jira stand-in; bad input shows each error next to its field."""

from __future__ import annotations

from urllib.parse import urlsplit

import pytest

from tests.conftest import browser_login, daphne_process
from tests.pages import console_run, shot
from tests.tools_app.connectors.servers import API_TOKEN, EMAIL, jira_app
from tests.tools_app.sources.servers import serve
from tools_app.models import Tool

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


@pytest.fixture
def jira_url():
    with serve(jira_app()) as url:
        yield url


@pytest.fixture
def studio(transactional_db, jira_url):
    # The stand-in's exact 127.0.0.1:port on the operator's allow-list, in Daphne's env.
    with daphne_process(STUDIO_PRIVATE_NETWORKS=urlsplit(jira_url).netloc) as url:
        yield url


def open_jira(page, studio: str) -> None:
    page.goto(f"{studio}/connectors/")
    page.wait_for_selector("#connectors-app[data-ready='1']")
    assert page.locator(".connector-card").count() == 7
    page.click(".connector-card[data-slug='jira']")
    page.wait_for_selector("#connect-form tr[data-key='GET /rest/api/3/search/jql']")


def test_connect_jira_add_its_tools_and_run_one_in_the_console(browser, owner, jira_url, studio):
    page = browser_login(browser, studio, "owner")
    open_jira(page, studio)
    assert page.locator("#connect-form tbody tr").count() == 5
    page.click("tr[data-key='GET /rest/api/3/search/jql'] summary")
    assert (
        "nextPageToken"
        in page.locator("tr[data-key='GET /rest/api/3/search/jql'] .op-doc").inner_text()
    )
    assert page.locator("#connect-add").inner_text() == "Add 5 tools"
    # OAuth is offered, or said to wait while the OpenAPI tool type cannot execute it;
    # the API token preset is chosen.
    assert page.locator("input[name=auth][value='oauth'], [data-waiting='oauth']").count() == 1
    assert page.locator("input[name=auth]:checked").input_value() == "api_token"
    page.fill("#instance-url", jira_url)
    page.fill("[data-cred='username']", EMAIL)
    page.fill("[data-cred='password']", API_TOKEN)
    page.uncheck("tr[data-key='POST /rest/api/3/issue/{issueIdOrKey}/comment'] .op-pick")
    assert page.locator("#connect-add").inner_text() == "Add 4 tools"
    shot(page, "connectors-jira")
    page.click("#connect-add")
    page.wait_for_selector("#connect-result .tool-chip")
    assert sorted(page.locator("#connect-result .tool-chip").all_inner_texts()) == [
        "jira_create_issue",
        "jira_get_issue",
        "jira_list_comments",
        "jira_search_issues",
    ]
    assert API_TOKEN not in page.content()
    page.wait_for_selector("#connected li .tool-chip")
    assert page.locator("#connected li").count() == 1
    assert Tool.objects.filter(owner=owner, kind="openapi").count() == 4
    shot(page, "connectors-added")

    page.click("#connect-result .tool-chip:text('jira_get_issue')")
    output = console_run(page, studio, "jira_get_issue", {"path": {"issueIdOrKey": "DEV-2"}})
    assert output["status"] == 200
    assert output["body"]["fields"]["summary"] == "Issue 2"
    shot(page, "connectors-console")

    # On Sources, the connector's source updates from the shipped spec: nothing changed.
    page.goto(f"{studio}/sources/")
    page.wait_for_selector("#sources-app[data-ready='1']")
    assert "from the connector" in page.locator(".source-card").inner_text()
    page.click(".source-card .link-button:text('Update')")
    page.wait_for_selector("#spec-preview-box tr[data-key='GET /rest/api/3/search/jql']")
    assert page.locator("#spec-text").is_hidden()
    statuses = page.locator("#spec-preview-box .status").all_inner_texts()
    assert statuses == ["unchanged"] * 5
    shot(page, "connectors-update")


def test_bad_input_shows_each_error_next_to_its_field(browser, owner, studio):
    page = browser_login(browser, studio, "owner")
    open_jira(page, studio)
    page.fill("[data-cred='username']", EMAIL)
    page.click("#connect-add")
    page.wait_for_selector("#connect-errors:not([hidden]) .error-list li")
    assert page.locator("[data-error-for='$.instance_url']").inner_text() == "Site URL is required"
    assert page.locator("[data-error-for='$.credentials.password']").inner_text() == (
        "API token is required"
    )
    assert page.locator("[data-error-for='$.credentials.username']").count() == 0
    page.fill("#instance-url", "ftp://acme")
    page.fill("[data-cred='password']", API_TOKEN)
    page.click("#connect-add")
    page.wait_for_selector("[data-error-for='$.instance_url']:text('must be an http(s) URL')")
    assert page.locator("#instance-url.has-error").count() == 1
    shot(page, "connectors-errors")
    assert not Tool.objects.filter(kind="openapi").exists()
