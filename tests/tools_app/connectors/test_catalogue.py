"""The catalogue itself: every shipped connector is a valid spec whose manifest matches
it, listed and shown through the REST API to signed-in users only."""

from __future__ import annotations

import pytest

from tools_app.connectors.catalogue import CREDENTIAL_FIELDS, catalogue
from tools_app.sources.openapi_spec import spec_operations
from tools_app.sources.openapi_validate import spec_validate

pytestmark = pytest.mark.django_db

EXPECTED = {
    "confluence",
    "google_maps",
    "google_search",
    "jira",
    "salesforce",
    "servicenow",
    "sharepoint",
}


@pytest.mark.parametrize("slug", sorted(EXPECTED))
def test_each_manifest_matches_its_valid_spec(slug):
    connector = catalogue()[slug]
    assert spec_validate(connector.document) == []
    operations = connector.spec_operations()
    schemes = connector.document["components"]["securitySchemes"]
    for key, name in connector.operations:
        op = operations[key]  # every offered operation exists in the spec
        assert op.summary and len(op.description) > 40, key
        assert op.output_schema is not None, key
        assert name.replace("_", "").isalnum() and name.islower(), name
    for preset in connector.auth:
        assert all(s in schemes for s in preset.schemes), preset.id
        required, optional = CREDENTIAL_FIELDS.get(preset.type, ((), ()))
        for field in (*required, *optional):
            assert field in preset.fields, (preset.id, field)
    assert any(p.available for p in connector.auth), "a connector usable today"
    for setting in connector.settings:
        assert all(connector.preset(p) for p in setting.presets), setting.id
        if setting.where == "oauth":  # a placeholder of its presets' OAuth URLs
            flows = [
                schemes[n]["flows"] for p in setting.presets for n in connector.preset(p).schemes
            ]
            assert any("{" + setting.name + "}" in str(f) for f in flows), setting.id
            continue
        declared = [
            (p["in"], p["name"])
            for key in (setting.operations or [k for k, _ in connector.operations])
            for p in operations[key].config["parameters"]
        ]
        assert (setting.where, setting.name) in declared, setting.id


def test_a_preset_gives_every_tool_its_own_authentication():
    jira = catalogue()["jira"]
    for op in jira.spec_operations().values():
        assert op.config["auth"]["type"] == "basic"  # the spec's first scheme
    salesforce = catalogue()["salesforce"]
    token = salesforce.preset("access_token")
    document = salesforce.document_for(token)
    assert document["security"] == [{"oauth2_access_token": ["api", "refresh_token"]}]
    assert document["components"]["securitySchemes"]["oauth2_access_token"]["scheme"] == "bearer"
    # An OAuth grant preset keeps its own flow, so the importer maps that grant.
    graph = catalogue()["sharepoint"]
    app = graph.document_for(graph.preset("client_credentials"))
    assert list(app["components"]["securitySchemes"]["oauth2"]["flows"]) == ["clientCredentials"]
    maps = catalogue()["google_maps"]
    auths = {op.key: op.config["auth"] for op in maps.spec_operations().values()}
    assert auths["GET /maps/api/geocode/json"]["in"] == "query"
    assert auths["POST /v1/places:searchText"]["name"] == "X-Goog-Api-Key"


def test_the_list_shows_every_connector_with_its_presets(api):
    response = api.get("/api/connectors/")
    assert response.status_code == 200
    data = {c["slug"]: c for c in response.json()}
    assert set(data) == EXPECTED
    jira = data["jira"]
    assert jira["instance"]["required"] is True
    presets = {p["id"]: p for p in jira["auth"]}
    assert presets["api_token"]["available"] is True
    assert [f["name"] for f in presets["api_token"]["fields"]] == ["username", "password"]
    # OAuth presets wait for the OpenAPI tool type to execute OAuth.
    assert presets["oauth"]["type"] == "oauth2_authorization_code"


def test_the_detail_lists_the_operations_with_their_tool_names(api):
    response = api.get("/api/connectors/jira/")
    assert response.status_code == 200
    ops = {o["key"]: o for o in response.json()["operations"]}
    assert ops["GET /rest/api/3/search/jql"]["name"] == "jira_search_issues"
    assert ops["POST /rest/api/3/issue"]["method"] == "POST"
    assert ops["POST /rest/api/3/issue"]["name_taken"] is False


def test_an_unknown_connector_is_404(api):
    assert api.get("/api/connectors/nope/").status_code == 404
    assert api.post("/api/connectors/nope/add", {}, format="json").status_code == 404


def test_the_catalogue_needs_a_signed_in_user(anon_client):
    assert anon_client.get("/api/connectors/").status_code in (401, 403)
    assert anon_client.post("/api/connectors/jira/add", {}, format="json").status_code in (401, 403)


def test_an_instance_url_serves_every_operation_and_resolves_relative_oauth_urls():
    servicenow = catalogue()["servicenow"]
    document = servicenow.document_for(servicenow.preset("oauth"), "https://acme.service-now.com")
    assert document["servers"] == [{"url": "https://acme.service-now.com"}]
    flow = document["components"]["securitySchemes"]["oauth2"]["flows"]["authorizationCode"]
    assert flow["tokenUrl"] == "https://acme.service-now.com/oauth_token.do"
    assert flow["authorizationUrl"] == "https://acme.service-now.com/oauth_auth.do"
    maps = catalogue()["google_maps"]
    proxied = maps.document_for(maps.preset("api_key"), "https://maps-proxy.example")
    bases = {op.config["base_url"] for op in spec_operations(proxied)}
    assert bases == {"https://maps-proxy.example"}
    assert len({op.config["base_url"] for op in maps.spec_operations().values()}) == 3


def test_an_oauth_preset_asks_for_its_scopes_and_fills_the_tenant():
    graph = catalogue()["sharepoint"]
    delegated = graph.document_for(graph.preset("oauth"), oauth={"tenant": "contoso.example"})
    assert delegated["security"] == [
        {"oauth2": ["Sites.Read.All", "Files.Read.All", "offline_access"]}
    ]
    flow = delegated["components"]["securitySchemes"]["oauth2"]["flows"]["authorizationCode"]
    assert flow["tokenUrl"] == (
        "https://login.microsoftonline.com/contoso.example/oauth2/v2.0/token"
    )
    tenant = next(s for s in graph.settings if s.id == "tenant")
    assert tenant.applies_to(graph.preset("client_credentials"))
    assert not tenant.applies_to(graph.preset("access_token"))
