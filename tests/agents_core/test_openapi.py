"""The OpenAPI schema (/api/schema/) and its docs page (/api/docs/) for the agents and
tools endpoints."""

from __future__ import annotations

import pytest
from django.urls import include, path
from drf_spectacular.drainage import GENERATOR_STATS
from drf_spectacular.generators import SchemaGenerator
from drf_spectacular.validation import validate_schema

import agents_core.urls
import tools_app.urls

pytestmark = pytest.mark.django_db

OUR_VIEW_MODULES = {"agents_core.api.agents", "tools_app.api.tools"}
OUR_PATHS = {
    "/api/agents/": {"get", "post"},
    "/api/agents/{slug}/": {"get", "put", "patch", "delete"},
    "/api/agents/{slug}/tools/": {"get", "post"},
    "/api/agents/{slug}/tools/{key}/": {"get", "put", "patch", "delete"},
    "/api/agents/{slug}/subagents/": {"get", "post"},
    "/api/agents/{slug}/subagents/{key}/": {"get", "put", "patch", "delete"},
    "/api/tools/": {"get", "post"},
    "/api/tools/{name}/": {"get", "put", "patch", "delete"},
    "/api/tool-types/": {"get"},
    "/api/tool-types/python/isolation/": {"get"},
}


def test_the_schema_lists_every_agents_and_tools_endpoint(api):
    response = api.get("/api/schema/?format=json")

    assert response.status_code == 200
    paths = response.json()["paths"]
    for url, methods in OUR_PATHS.items():
        assert url in paths, url
        assert methods <= set(paths[url]), (url, set(paths[url]))


def test_the_schema_describes_write_only_credentials_and_the_read_side(api):
    schemas = api.get("/api/schema/?format=json").json()["components"]["schemas"]

    assert "credentials" in schemas["ToolInput"]["properties"]
    assert "credentials" not in schemas["ToolOutput"]["properties"]
    assert schemas["ToolOutput"]["properties"]["has_credentials"]["type"] == "boolean"
    assert "results" in schemas["PaginatedAgentOutputList"]["properties"]
    # PUT may leave out what the URL names; POST may not.
    assert "slug" in schemas["AgentInput"]["required"]
    assert "slug" not in schemas["AgentUpdateInput"].get("required", [])
    assert not {"name", "kind"} & set(schemas["ToolUpdateInput"].get("required", []))


def test_our_endpoints_generate_a_valid_schema_without_warnings():
    ours = [
        pattern
        for pattern in agents_core.urls.urlpatterns + tools_app.urls.urlpatterns
        if pattern.callback.__module__ in OUR_VIEW_MODULES
    ]
    GENERATOR_STATS.reset()

    schema = SchemaGenerator(patterns=[path("api/", include(ours))]).get_schema(public=True)

    warnings = dict(GENERATOR_STATS._warn_cache) | dict(GENERATOR_STATS._error_cache)
    assert warnings == {}
    validate_schema(schema)
    assert set(schema["paths"]) == set(OUR_PATHS)


@pytest.mark.parametrize("url", ["/api/schema/", "/api/docs/"])
def test_the_schema_and_the_docs_need_a_login(anon_client, url):
    assert anon_client.get(url).status_code == 401


def test_the_docs_page_serves_swagger_ui_from_the_studio_not_a_cdn(client, owner):
    client.force_login(owner)

    response = client.get("/api/docs/")

    assert response.status_code == 200
    body = response.content.decode()
    assert "/static/drf_spectacular_sidecar/swagger-ui-dist/swagger-ui-bundle.js" in body
    assert "cdn.jsdelivr.net" not in body
