"""The editor's endpoints appear in the OpenAPI schema, without generator warnings."""

from __future__ import annotations

from django.urls import include, path
from drf_spectacular.drainage import GENERATOR_STATS
from drf_spectacular.generators import SchemaGenerator
from drf_spectacular.validation import validate_schema

import agents_core.urls

EDITOR_PATHS = {
    "/api/agents/{slug}/overrides/": {"get", "put", "patch"},
    "/api/agents/{slug}/overrides/reset": {"post"},
    "/api/agents/{slug}/lock/": {"get", "post", "put", "delete"},
    "/api/agents/{slug}/lock/break": {"post"},
    "/api/agents/{slug}/revisions/": {"get"},
    "/api/agents/{slug}/revisions/{revision_id}/": {"get"},
    "/api/agents/{slug}/revisions/{revision_id}/restore": {"post"},
}


def test_the_editor_endpoints_generate_a_valid_schema_without_warnings():
    ours = [
        p for p in agents_core.urls.urlpatterns if p.callback.__module__ == "agents_core.api.editor"
    ]
    GENERATOR_STATS.reset()
    schema = SchemaGenerator(patterns=[path("api/", include(ours))]).get_schema(public=True)
    warnings = dict(GENERATOR_STATS._warn_cache) | dict(GENERATOR_STATS._error_cache)
    assert warnings == {}
    validate_schema(schema)
    assert {url: set(ops) - {"parameters"} for url, ops in schema["paths"].items()} == EDITOR_PATHS
    patch = schema["paths"]["/api/agents/{slug}/overrides/"]["patch"]
    assert {"409", "412", "428"} <= set(patch["responses"])
    assert any(p["name"] == "If-Match" for p in patch["parameters"])
