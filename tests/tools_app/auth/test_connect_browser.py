"""The connect flow in headless Chromium: on the tool's page the user presses Connect,
approves on the local OAuth server's page, comes back connected; a tool call then acts as
that user; Disconnect revokes at the server."""

from __future__ import annotations

import json
from concurrent.futures import ThreadPoolExecutor

import pytest

from tests.conftest import browser_login, daphne_process
from tests.pages import shot
from tests.tools_app.auth.servers import OAuthServer
from tools_app.connectors.services import connector_add
from tools_app.crypto import credentials_set
from tools_app.models import OAuthToken, Source, Tool
from tools_app.services.execute import tool_execute


@pytest.fixture
def oauth_and_studio(transactional_db, private_network):
    server = OAuthServer()
    private_network(server.url)
    entry = server.url.removeprefix("http://")
    with daphne_process(STUDIO_PRIVATE_NETWORKS=entry) as studio:
        server.clients["studio-web"] = {
            "secret": "web-secret",
            "redirect_uris": [f"{studio}/oauth/callback"],
        }
        yield server, studio
    server.stop()


def test_connect_approve_call_and_disconnect(oauth_and_studio, browser, owner):
    server, studio = oauth_and_studio
    tool = Tool.objects.create(
        name="my_profile",
        kind="http",
        owner=owner,
        source=Source.STUDIO,
        input_schema={"type": "object"},
        config={
            "url": f"{server.url}/api/me",
            "auth": {
                "type": "oauth2_authorization_code",
                "authorization_url": f"{server.url}/authorize",
                "token_url": f"{server.url}/token",
                "revocation_url": f"{server.url}/revoke",
                "scopes": ["profile"],
            },
        },
    )
    credentials_set(tool, {"client_id": "studio-web", "client_secret": "web-secret"})
    page = browser_login(browser, studio, "owner")
    page.goto(f"{studio}/tools/my_profile/")
    page.wait_for_selector("#connection-status[data-connected='false']")

    page.click("#connect-account")
    page.wait_for_selector("#approve")  # the authorization server's own page
    page.fill("input[name=user]", "alice")
    page.click("#approve")
    page.wait_for_url(f"{studio}/tools/my_profile/?connected=1")
    page.wait_for_selector("#connection-status[data-connected='true']")
    assert "scope: profile" in page.inner_text("#connection-status")
    assert OAuthToken.objects.filter(tool=tool, user=owner).count() == 1

    # Playwright's loop runs in this thread; the tool runs in another, as a worker would.
    with ThreadPoolExecutor(1) as pool:
        run = pool.submit(tool_execute, tool=tool, input={}, user=owner).result()
    assert run.status == "completed", run.error
    assert run.output["body"]["sub"] == "alice"
    assert server.access[server.api_requests[-1]["token"]]["sub"] == "alice"
    assert server.api_requests[-1]["token"] not in page.content()

    page.click("#disconnect-account")
    page.wait_for_selector("#connection-status[data-connected='false']")
    assert page.inner_text("#connection-note") == "Revoked at the server."
    assert server.revocations and not OAuthToken.objects.filter(tool=tool).exists()
    page.context.close()


def test_importing_an_oauth_spec_asks_for_the_client_and_tls_secrets(
    oauth_and_studio, browser, owner, pki
):
    server, studio = oauth_and_studio
    server.clients["importer"] = {"secret": "imp", "redirect_uris": []}
    spec = {
        "openapi": "3.1.0",
        "info": {"title": "Reports", "version": "1"},
        "servers": [{"url": server.url}],
        "components": {
            "securitySchemes": {
                "o": {
                    "type": "oauth2",
                    "flows": {"clientCredentials": {"tokenUrl": "/token", "scopes": {}}},
                }
            }
        },
        "security": [{"o": []}],
        "paths": {
            "/api/reports": {
                "get": {"operationId": "listReports", "responses": {"200": {"description": "ok"}}}
            }
        },
    }
    page = browser_login(browser, studio, "owner")
    page.goto(f"{studio}/sources/")
    page.wait_for_selector("#sources-app[data-ready='1']")
    page.fill("#spec-text", json.dumps(spec))
    page.click("#spec-preview")
    page.wait_for_selector("table.ops tbody tr")
    assert page.inner_text(".auth-badge") == "oauth2 client_credentials"
    page.check(".op-pick")
    page.fill("[data-cred='client_id']", "importer")
    page.fill("[data-cred='client_secret']", "imp")
    page.click(".tls-creds summary")
    page.fill("[data-cred='client_cert']", "not a certificate")
    page.click("#spec-import")
    # A bad PEM is refused with its path, and nothing is imported.
    page.wait_for_selector("#spec-errors :text('$.credentials.client_cert')")
    assert not Tool.objects.filter(name="list_reports").exists()

    page.fill("[data-cred='client_cert']", "")
    page.click("#spec-import")
    page.wait_for_selector(".success")
    tool = Tool.objects.get(name="list_reports")
    assert tool.config["auth"]["type"] == "oauth2_client_credentials"
    with ThreadPoolExecutor(1) as pool:
        run = pool.submit(tool_execute, tool=tool, input={}, user=owner).result()
    assert run.status == "completed", run.error
    assert run.output["body"]["sub"] == "client:importer"
    page.context.close()


def test_a_connector_source_is_connected_from_the_connectors_page(oauth_and_studio, browser, owner):
    server, studio = oauth_and_studio
    source = connector_add(
        user=owner,
        slug="salesforce",
        data={
            "instance_url": server.url,
            "auth": "oauth",
            "credentials": {"client_id": "studio-web", "client_secret": "web-secret"},
            "picks": [{"key": "GET /services/data/v62.0/query"}],
        },
    )
    # Salesforce's own sign-in pages stand in as the local authorization server's.
    for tool in Tool.objects.filter(owner=owner):
        auth = tool.config["auth"]
        auth.update(authorization_url=f"{server.url}/authorize", token_url=f"{server.url}/token")
        tool.save(update_fields=["config"])
    page = browser_login(browser, studio, "owner")
    page.goto(f"{studio}/connectors/#salesforce")
    line = page.locator(f'li[data-source="{source.pk}"] .account-line')
    line.wait_for()
    assert line.get_attribute("data-connected") == "false"
    assert "Not connected" in line.inner_text()

    line.locator("a[data-connect]").click()
    page.wait_for_selector("#approve")
    page.fill("input[name=user]", "bob")
    page.click("#approve")
    page.wait_for_url(f"{studio}/connectors/?connected=1#salesforce")
    page.wait_for_selector(f'li[data-source="{source.pk}"] .account-line[data-connected="true"]')
    assert "Your account is connected." in line.inner_text()
    # One connection for the source, held for this user, serves each of its tools.
    token = OAuthToken.objects.get(user=owner)
    assert token.source_id == source.pk and token.tool_id is None
    page.context.close()


@pytest.fixture
def mcp_oauth_and_studio(transactional_db, private_network):
    """An MCP server requiring the local OAuth server's tokens, and a studio that may
    reach both."""
    from tests.tools_app.auth.mcp_server import mcp_oauth_app
    from tests.tools_app.sources.servers import serve

    server = OAuthServer()
    server.publish_metadata()
    with serve(mcp_oauth_app(server)) as mcp_base:
        entries = [private_network(url).removeprefix("http://") for url in (server.url, mcp_base)]
        with daphne_process(STUDIO_PRIVATE_NETWORKS=",".join(entries)) as studio:
            yield server, f"{mcp_base}/mcp", studio
    server.stop()


def test_an_mcp_source_with_its_own_oauth_is_connected_from_the_sources_page(
    mcp_oauth_and_studio, browser, owner
):
    from tools_app.sources.mcp import mcp_server_register

    server, mcp_url, studio = mcp_oauth_and_studio
    with ThreadPoolExecutor(1) as pool:  # off the browser's event loop
        source = pool.submit(
            mcp_server_register,
            user=owner,
            url=mcp_url,
            name="Remote",
            redirect_uri=f"{studio}/oauth/callback",
        ).result()
    page = browser_login(browser, studio, "owner")
    page.goto(f"{studio}/sources/")
    signin = page.locator(f'[data-signin="{source.pk}"]')
    signin.locator(".account-line").wait_for()
    assert "Sign-in: OAuth (the server's own)" in signin.inner_text()
    assert signin.locator(".account-line").get_attribute("data-connected") == "false"

    signin.locator("a[data-connect]").click()
    page.wait_for_selector("#approve")  # the authorization server's own page
    page.fill("input[name=user]", "bob")
    page.click("#approve")
    page.wait_for_url(f"{studio}/sources/?connected=1")
    page.wait_for_selector(f'[data-signin="{source.pk}"] .account-line[data-connected="true"]')
    assert "Press Refresh to list its tools." in signin.inner_text()
    page.locator(f'li[data-source="{source.pk}"] button', has_text="Refresh").click()
    page.wait_for_selector('#mcp-pick-box tr[data-remote="whoami"]')  # listed as bob
    shot(page, "sources_mcp_oauth")
    assert OAuthToken.objects.get(user=owner).source_id == source.pk
    page.context.close()
