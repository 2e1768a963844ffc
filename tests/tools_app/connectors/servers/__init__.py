"""Local stand-ins for the connectors' APIs, on 127.0.0.1 (served with uvicorn by
tests.tools_app.sources.servers.serve). Each speaks the subset its connector uses as the
real API does: paths, authentication, paging and error bodies. Every request is recorded
in `app.state.requests` for the tests to check what the tool sent."""

from tests.tools_app.connectors.servers.atlassian import confluence_app, jira_app
from tests.tools_app.connectors.servers.common import (
    API_TOKEN,
    BEARER,
    CX,
    EMAIL,
    GOOGLE_KEY,
    SN_PASSWORD,
    SN_USER,
)
from tests.tools_app.connectors.servers.google import google_maps_app, google_search_app
from tests.tools_app.connectors.servers.graph import graph_app
from tests.tools_app.connectors.servers.salesforce import salesforce_app
from tests.tools_app.connectors.servers.servicenow import servicenow_app

__all__ = [
    "API_TOKEN",
    "BEARER",
    "CX",
    "EMAIL",
    "GOOGLE_KEY",
    "SN_PASSWORD",
    "SN_USER",
    "confluence_app",
    "google_maps_app",
    "google_search_app",
    "graph_app",
    "jira_app",
    "salesforce_app",
    "servicenow_app",
]
