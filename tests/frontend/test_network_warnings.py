"""The address guard's verdict in headless Chromium: the HTTP tool form and the OpenAPI
base URL warn while the URL is typed, saving stays possible, and a tool's page shows a
private network the operator allows (STUDIO_PRIVATE_NETWORKS of the Daphne process)."""

from __future__ import annotations

import json
import os

import pytest

from tests.conftest import browser_login, daphne_process
from tests.tools_app.sources.servers import pets_spec
from tools_app.models import Source, Tool

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]
SHOTS = os.environ.get("STUDIO_SCREENSHOTS", "")
ALLOWED = "10.1.0.0/16"


def shot(page, name: str) -> None:
    if SHOTS:
        page.screenshot(path=os.path.join(SHOTS, f"{name}.png"), full_page=True)


@pytest.fixture
def studio(transactional_db):
    with daphne_process(STUDIO_PRIVATE_NETWORKS=ALLOWED) as url:
        yield url


def verdict_of(page, box: str, status: str) -> str:
    page.wait_for_selector(f"{box}[data-status='{status}']", state="attached")
    return page.locator(box).inner_text()


def test_the_http_tool_form_warns_while_the_url_is_typed_and_still_saves(browser, owner, studio):
    page = browser_login(browser, studio, "owner")
    page.goto(f"{studio}/tools/new/?kind=http")
    page.wait_for_selector("#tools-app[data-ready='1']")
    page.fill("#tool-name", "instance_metadata")
    url = page.locator("#tool-config input[name='$.url']")
    box = "#tool-config [data-path='$.url'] .url-verdict-box"

    url.fill("http://metadata.google.internal/computeMetadata/v1/")
    text = verdict_of(page, box, "refused")
    assert "Calls to this URL will be refused: metadata.google.internal is the Google Cloud" in text
    shot(page, "http-form-refused")

    url.fill("http://10.1.2.3/items/{sku}")
    assert verdict_of(page, box, "allowed") == (
        f"Private network access: allowed by the operator ({ALLOWED})."
    )
    shot(page, "http-form-private")

    url.fill("http://10.2.0.1/items")
    assert "Private-Use (10.0.0.0/8, RFC 1918)" in verdict_of(page, box, "refused")

    url.fill("https://{host}/items")
    assert "the host comes from the tool's input" in verdict_of(page, box, "unknown")

    url.fill("http://93.184.215.14/items")
    assert verdict_of(page, box, "allowed") == ""

    # A refused URL is saved with the warning: the calls will fail until the operator
    # allows the address; the tool page then says so.
    url.fill("http://169.254.169.254/latest/meta-data/")
    verdict_of(page, box, "refused")
    page.click("#save-tool")
    page.wait_for_url(f"{studio}/tools/instance_metadata/")
    page.wait_for_selector("#network-access:not([hidden]) .url-verdict")
    line = page.locator("#network-access .url-verdict").inner_text()
    assert line.startswith("http://169.254.169.254/latest/meta-data/ ⚠ Calls to this URL will")
    assert "Link Local (169.254.0.0/16, RFC 3927)" in line
    assert Tool.objects.get(name="instance_metadata").config["url"].startswith("http://169.254")
    shot(page, "http-tool-page-refused")


def test_a_tool_page_shows_the_private_network_the_operator_allows(browser, owner, studio):
    Tool.objects.create(
        name="inventory",
        kind="http",
        owner=owner,
        source=Source.STUDIO,
        input_schema={"type": "object"},
        config={"url": "http://10.1.2.3/items/{sku}"},
    )
    Tool.objects.create(
        name="public_api",
        kind="http",
        owner=owner,
        source=Source.STUDIO,
        input_schema={"type": "object"},
        config={"url": "http://93.184.215.14/items"},
    )
    page = browser_login(browser, studio, "owner")

    page.goto(f"{studio}/tools/inventory/")
    page.wait_for_selector("#network-access:not([hidden]) .url-verdict.is-private")
    assert page.locator("#network-access .url-verdict").all_inner_texts() == [
        "http://10.1.2.3/items/{sku} "
        f"Private network access: allowed by the operator ({ALLOWED})."
    ]
    shot(page, "tool-page-private-network")

    # A public URL needs no line; the section stays hidden.
    page.goto(f"{studio}/tools/public_api/")
    page.wait_for_selector("#tools-app[data-ready='1']")
    page.wait_for_selector("#used-by h3")
    assert page.locator("#network-access").is_hidden()


def test_the_openapi_base_url_and_the_source_urls_warn_before_import(browser, owner, studio):
    page = browser_login(browser, studio, "owner")
    page.goto(f"{studio}/sources/")
    page.wait_for_selector("#sources-app[data-ready='1']")
    spec = pets_spec("http://10.20.0.5/api")
    spec["servers"].append({"url": "http://10.1.0.9/api"})
    page.fill("#spec-text", json.dumps(spec))
    page.click("#spec-preview")
    page.wait_for_selector("#base-url")
    box = "#spec-preview-box .url-verdict-box"

    text = verdict_of(page, box, "refused")
    assert "Calls to this URL will be refused: 10.20.0.5 is in" in text
    assert "Private-Use (10.0.0.0/8, RFC 1918)" in text
    shot(page, "openapi-base-url-refused")

    page.fill("#base-url", "http://10.1.0.9/api")
    assert verdict_of(page, box, "allowed") == (
        f"Private network access: allowed by the operator ({ALLOWED})."
    )

    page.click(".tab[data-tab='mcp']")
    page.fill("#mcp-form input[name=url]", "http://redis:6379/mcp")
    text = verdict_of(page, "#mcp-form .url-verdict-box", "refused")
    assert "redis is a single-label name" in text
    shot(page, "mcp-url-refused")
