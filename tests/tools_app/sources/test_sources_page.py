"""The sources page in headless Chromium: import a spec, pick two operations, then test
one of the new tools in the tool panel's console."""

from __future__ import annotations

import json
from urllib.parse import urlsplit

import pytest

from tests.conftest import browser_login, daphne_process
from tests.pages import console_run, shot
from tests.tools_app.sources.servers import (
    A2A_TOKEN,
    API_KEY,
    MCP_TOKEN,
    mcp_http_app,
    pets_spec,
    serve,
    serve_a2a_agent,
)
from tools_app.models import Tool

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def studio_reaching(*urls: str):
    """The studio, with the exact 127.0.0.1:port of each test server on the operator's
    allow-list (STUDIO_PRIVATE_NETWORKS in the Daphne process's environment)."""
    entries = ",".join(urlsplit(url).netloc for url in urls)
    return daphne_process(STUDIO_PRIVATE_NETWORKS=entries)


@pytest.fixture
def mcp_base():
    with serve(mcp_http_app()) as url:
        yield url


@pytest.fixture
def a2a_base():
    with serve_a2a_agent() as url:
        yield url


@pytest.fixture
def pets_studio(transactional_db, pets_api):
    with studio_reaching(pets_api) as url:
        yield url


@pytest.fixture
def remote_studio(transactional_db, mcp_base, a2a_base):
    with studio_reaching(mcp_base, a2a_base) as url:
        yield url


def test_import_a_spec_pick_two_operations_and_test_one_in_the_console(
    browser, owner, pets_api, pets_studio
):
    page = browser_login(browser, pets_studio, "owner")
    page.goto(f"{pets_studio}/sources/")
    page.wait_for_selector("#sources-app[data-ready='1']")
    spec = pets_spec(f"{pets_api}/api")
    spec["servers"].append({"url": "https://pets.example/v1"})
    page.fill("#spec-text", json.dumps(spec, indent=2))
    page.click("#spec-preview")
    page.wait_for_selector("table.ops tbody tr")
    assert page.locator("table.ops tbody tr").count() == 8
    # Every declared server is offered; the first is the default.
    assert page.locator("#base-url").input_value() == f"{pets_api}/api"
    assert page.locator("#server-urls option").evaluate_all(
        "options => options.map(o => o.value)"
    ) == [f"{pets_api}/api", "https://pets.example/v1"]
    assert "2 servers declared" in page.locator("#server-count").inner_text()
    page.check("tr[data-key='GET /pets/{petId}'] .op-pick")
    page.fill("tr[data-key='GET /pets/{petId}'] .op-name", "fetch_pet")
    page.check("tr[data-key='GET /pets'] .op-pick")
    assert page.locator("#pick-count").inner_text() == "2 selected"
    page.fill("[data-cred='api_key']", API_KEY)
    shot(page, "sources-preview")
    page.click("#spec-import")
    page.wait_for_selector(".success .tool-chip")
    assert sorted(page.locator(".success .tool-chip").all_inner_texts()) == [
        "fetch_pet",
        "list_pets",
    ]
    # The list of sources reloads after the success message: wait for it.
    page.wait_for_selector(".source-card")
    assert page.locator(".source-card").count() == 1
    shot(page, "sources-imported")
    assert Tool.objects.filter(owner=owner, kind="openapi").count() == 2

    page.click(".success .tool-chip:text('fetch_pet')")
    output = console_run(page, pets_studio, "fetch_pet", {"path": {"petId": "1"}})
    assert output["status"] == 200
    assert output["body"]["name"] == "Rex"
    shot(page, "sources-console")


def test_a_malformed_spec_shows_each_error_with_its_place(browser, owner, studio_server):
    page = browser_login(browser, studio_server, "owner")
    page.goto(f"{studio_server}/sources/")
    page.wait_for_selector("#sources-app[data-ready='1']")
    document = pets_spec()
    del document["paths"]["/pets"]["get"]["responses"]
    page.fill("#spec-text", json.dumps(document))
    page.click("#spec-preview")
    page.wait_for_selector("#spec-errors:not([hidden]) .error-list li")
    text = page.locator("#spec-errors").inner_text()
    assert '$.paths["/pets"].get' in text
    assert "'responses' is a required property" in text
    shot(page, "sources-errors")


def test_register_an_mcp_server_pick_a_tool_and_add_an_a2a_agent(
    browser, owner, mcp_base, a2a_base, remote_studio
):
    page = browser_login(browser, remote_studio, "owner")
    page.goto(f"{remote_studio}/sources/")
    page.wait_for_selector("#sources-app[data-ready='1']")
    page.click(".tab[data-tab='mcp']")
    page.fill("#mcp-form input[name=url]", f"{mcp_base}/mcp")
    page.fill("#mcp-form input[name=name]", "Calculator")
    page.fill("#mcp-form textarea[name=headers]", f"X-Token: {MCP_TOKEN}")
    page.click("#mcp-form button[type=submit]")
    page.wait_for_selector("#mcp-pick-box tr[data-remote='add']")
    page.check("tr[data-remote='add'] .op-pick")
    page.fill("tr[data-remote='add'] .op-name", "calc_add")
    shot(page, "sources-mcp-pick")
    page.click("#mcp-pick-box button.primary")
    page.wait_for_selector("#mcp-result .tool-chip")
    assert page.locator("#mcp-result .tool-chip").inner_text() == "calc_add"
    assert Tool.objects.get(name="calc_add").kind == "mcp"
    assert MCP_TOKEN not in page.content()

    page.click(".tab[data-tab='a2a']")
    page.fill("#a2a-form input[name=card_url]", f"{a2a_base}/.well-known/agent-card.json")
    page.fill("#a2a-form textarea[name=headers]", f"Authorization: Bearer {A2A_TOKEN}")
    page.click("#a2a-form button[type=submit]")
    page.wait_for_selector("#a2a-done .tool-chip")
    assert page.locator("#a2a-done .tool-chip").inner_text() == "echo_agent"
    # The list of sources reloads after the success message: wait for the second card.
    page.wait_for_function("() => document.querySelectorAll('.source-card').length === 2")
    assert page.locator(".source-card").count() == 2
    shot(page, "sources-a2a")


def test_reimport_shows_what_changed_and_applies_it(browser, owner, api, pets_api, studio_server):
    spec = pets_spec(f"{pets_api}/api")
    response = api.post(
        "/api/sources/openapi/import",
        {"text": json.dumps(spec), "picks": [{"key": "GET /pets"}, {"key": "GET /boom"}]},
        format="json",
    )
    assert response.status_code == 201
    spec["paths"]["/pets"]["get"]["parameters"].append(
        {"name": "sort", "in": "query", "schema": {"type": "string"}}
    )
    del spec["paths"]["/boom"]
    page = browser_login(browser, studio_server, "owner")
    page.goto(f"{studio_server}/sources/")
    page.wait_for_selector("#sources-app[data-ready='1']")
    page.click(".source-card .link-button:text('Re-import')")
    assert page.locator("#openapi-title").inner_text() == 'Re-import "Pets API"'
    page.fill("#spec-text", json.dumps(spec))
    page.click("#spec-preview")
    page.wait_for_selector("tr.diff-changed")
    assert page.locator("tr[data-key='GET /pets'] .status").inner_text() == "changed"
    assert "query parameter added: sort" in page.locator("tr[data-key='GET /pets']").inner_text()
    assert page.locator("tr[data-key='GET /boom'] .status").inner_text() == "removed"
    page.check("tr[data-key='POST /pets'] .op-pick")
    shot(page, "sources-reimport")
    page.click("#reimport-apply")
    page.wait_for_selector("#spec-preview-box .success")
    text = page.locator("#spec-preview-box .success").inner_text()
    assert "Updated: list_pets" in text and "retired: boom" in text and "added: create_pet" in text
    assert (
        "sort"
        in Tool.objects.get(name="list_pets").input_schema["properties"]["query"]["properties"]
    )
