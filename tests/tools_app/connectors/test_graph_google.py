"""SharePoint (Microsoft Graph), Google Custom Search and Google Maps connectors against
local stand-ins of their APIs."""

from __future__ import annotations

import pytest

from tests.tools_app.connectors.servers import (
    BEARER,
    CX,
    GOOGLE_KEY,
    google_maps_app,
    google_search_app,
    graph_app,
)
from tools_app.models import Tool

pytestmark = pytest.mark.django_db


@pytest.fixture
def graph(connect):
    return connect("sharepoint", graph_app(), auth="access_token", credentials={"token": BEARER})[1]


@pytest.fixture
def search(connect):
    return connect(
        "google_search",
        google_search_app(),
        auth="api_key",
        credentials={"api_key": GOOGLE_KEY},
        settings={"cx": CX},
    )[1]


@pytest.fixture
def maps(connect):
    return connect(
        "google_maps", google_maps_app(), auth="api_key", credentials={"api_key": GOOGLE_KEY}
    )[1]


def test_graph_search_posts_the_search_request_with_the_token(graph, run_tool):
    request = {"entityTypes": ["driveItem"], "query": {"queryString": "Q3 report"}, "size": 10}
    run = run_tool("sharepoint_search", {"body": {"requests": [request]}})
    assert run.status == "completed", run.error
    hits = run.output["body"]["value"][0]["hitsContainers"][0]["hits"]
    assert hits[0]["resource"]["name"] == "Q3.pptx"
    sent = graph.state.requests[-1]
    assert (sent["method"], sent["path"]) == ("POST", "/v1.0/search/query")
    assert sent["json"] == {"requests": [request]}
    assert sent["headers"]["authorization"] == f"Bearer {BEARER}"


def test_graph_lists_follow_odata_next_link(graph, run_tool):
    site = "contoso.sharepoint.com,1,2"
    names, query = [], {"$top": 2}
    while True:
        run = run_tool("sharepoint_list_lists", {"path": {"site-id": site}, "query": query})
        assert run.status == "completed", run.error
        names += [v["displayName"] for v in run.output["body"]["value"]]
        link = run.output["body"].get("@odata.nextLink")
        if not link:
            break
        query = {"$top": 2, "$skiptoken": link.rsplit("$skiptoken=", 1)[1]}
    assert names == [f"List {n}" for n in range(5)]
    # The site id's commas stay one path segment, escaped.
    assert graph.state.requests[-1]["path"] == f"/v1.0/sites/{site}/lists"
    assert graph.state.requests[-1]["query"] == {"$top": "2", "$skiptoken": "4"}


def test_graph_errors_keep_their_shape(graph, run_tool):
    run = run_tool("sharepoint_get_item", {"path": {"drive-id": "b!drive", "item-id": "nope"}})
    assert run.status == "failed"
    assert run.output["body"]["error"]["code"] == "itemNotFound"
    found = run_tool("sharepoint_get_item", {"path": {"drive-id": "b!drive", "item-id": "01ABC"}})
    assert found.status == "completed", found.error
    assert graph.state.requests[-1]["path"] == "/v1.0/drives/b!drive/items/01ABC"


def test_google_search_sends_the_key_and_the_fixed_engine_id_and_pages_by_start(search, run_tool):
    tool = Tool.objects.get(name="google_search")
    # The engine ID is the connector's setting: the model never sees or sets it.
    assert "cx" not in tool.input_schema["properties"]["query"]["properties"]
    run = run_tool("google_search", {"query": {"q": "django channels", "num": 10}})
    assert run.status == "completed", run.error
    body = run.output["body"]
    assert body["items"][0] == {
        "kind": "customsearch#result",
        "title": "Result 1",
        "link": "https://example.org/1",
        "displayLink": "example.org",
        "snippet": "Snippet 1 about django channels",
    }
    sent = search.state.requests[-1]
    assert sent["query"] == {"q": "django channels", "num": "10", "cx": CX, "key": GOOGLE_KEY}
    start = body["queries"]["nextPage"][0]["startIndex"]
    page = run_tool("google_search", {"query": {"q": "django channels", "start": start}})
    assert page.output["body"]["items"][0]["title"] == "Result 11"


def test_google_errors_keep_their_shape(connect, run_tool):
    connect(
        "google_search",
        google_search_app(),
        auth="api_key",
        credentials={"api_key": "wrong"},
        settings={"cx": CX},
    )
    run = run_tool("google_search", {"query": {"q": "x"}})
    assert run.status == "failed"
    assert run.output["body"]["error"]["status"] == "INVALID_ARGUMENT"
    assert run.output["body"]["error"]["code"] == 400
    assert "API key not valid" in run.error


def test_maps_geocode_places_and_directions(maps, run_tool):
    geo = run_tool("maps_geocode", {"query": {"address": "Champ de Mars, Paris"}})
    assert geo.status == "completed", geo.error
    assert geo.output["body"]["status"] == "OK"
    assert geo.output["body"]["results"][0]["geometry"]["location"]["lat"] == 48.8583701
    nothing = run_tool("maps_geocode", {"query": {"address": "nowhere"}})
    assert nothing.status == "completed", nothing.error  # ZERO_RESULTS is an answer
    assert nothing.output["body"] == {"results": [], "status": "ZERO_RESULTS"}
    assert maps.state.requests[0]["query"] == {
        "address": "Champ de Mars, Paris",
        "key": GOOGLE_KEY,
    }

    names, token = [], None
    while True:
        body = {"textQuery": "cafe near Gare de Lyon", "pageSize": 2}
        run = run_tool(
            "maps_search_places", {"body": {**body, **({"pageToken": token} if token else {})}}
        )
        assert run.status == "completed", run.error
        names += [p["displayName"]["text"] for p in run.output["body"]["places"]]
        token = run.output["body"].get("nextPageToken")
        if not token:
            break
    assert names == [f"Cafe {n}" for n in range(1, 6)]
    sent = maps.state.requests[-1]
    assert (sent["method"], sent["path"]) == ("POST", "/v1/places:searchText")
    assert sent["headers"]["x-goog-api-key"] == GOOGLE_KEY
    assert sent["headers"]["x-goog-fieldmask"].startswith("places.id,places.displayName")
    assert "key" not in sent["query"]

    route = run_tool(
        "maps_directions",
        {
            "body": {
                "origin": {"address": "Eiffel Tower"},
                "destination": {"address": "Louvre"},
                "travelMode": "WALK",
            }
        },
    )
    assert route.status == "completed", route.error
    assert route.output["body"]["routes"][0]["distanceMeters"] == 3712
    assert maps.state.requests[-1]["headers"]["x-goog-fieldmask"].startswith(
        "routes.distanceMeters"
    )


def test_maps_a_denied_key_answers_its_status_in_the_body(connect, run_tool):
    connect("google_maps", google_maps_app(), auth="api_key", credentials={"api_key": "bad"})
    geo = run_tool("maps_geocode", {"query": {"address": "x"}})
    # The Geocoding API answers HTTP 200 with a status in the body (x-error-status).
    assert geo.status == "failed"
    assert geo.output["status"] == 200
    assert geo.error == "The API answered status REQUEST_DENIED: The provided API key is invalid."
    places = run_tool("maps_search_places", {"body": {"textQuery": "x"}})
    assert places.status == "failed"
    assert places.output["body"]["error"]["status"] == "PERMISSION_DENIED"
