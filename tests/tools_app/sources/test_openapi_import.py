"""Importing a spec through the REST API and running its operations against a real HTTP
API on 127.0.0.1 (tests/tools_app/sources/servers.py)."""

from __future__ import annotations

import json

import pytest

from tests.tools_app.sources.servers import API_KEY, pets_spec
from tools_app.models import Tool, ToolSource
from tools_app.services.execute import tool_execute

pytestmark = pytest.mark.django_db

PREVIEW = "/api/sources/openapi/preview"
IMPORT = "/api/sources/openapi/import"


def _spec_text(base_url: str) -> str:
    return json.dumps(pets_spec(f"{base_url}/api"))


def _import(api, pets_api, picks, credentials=None):
    body = {"text": _spec_text(pets_api), "picks": picks}
    if credentials:
        body["credentials"] = credentials
    response = api.post(IMPORT, body, format="json")
    assert response.status_code == 201, response.json()
    return response.json()


def _run(owner, name, payload):
    return tool_execute(tool=Tool.objects.get(name=name), input=payload, user=owner)


def test_preview_lists_operations_with_suggested_names(api, pets_api):
    response = api.post(PREVIEW, {"text": _spec_text(pets_api)}, format="json")
    assert response.status_code == 200
    data = response.json()
    assert data["title"] == "Pets API"
    names = {op["key"]: op["suggested_name"] for op in data["operations"]}
    assert names["GET /pets/{petId}"] == "get_pet"
    assert names["POST /pets"] == "create_pet"
    assert "document" not in data
    # The declared servers, for the page to offer (the first one is the default).
    assert data["servers"] == [data["base_url"]]


def test_preview_by_url_fetches_the_spec_through_the_guard(api, pets_api, pets_api_reachable):
    response = api.post(PREVIEW, {"url": f"{pets_api}/openapi.json"}, format="json")
    assert response.status_code == 200, response.json()
    # The spec's relative server URL is resolved against where it was fetched from.
    assert response.json()["base_url"] == f"{pets_api}/api"


def test_preview_by_url_refuses_loopback_without_an_allow_list_entry(api, pets_api):
    response = api.post(PREVIEW, {"url": f"{pets_api}/openapi.json"}, format="json")
    assert response.status_code == 400
    assert response.json()["code"] == "blocked_url"


def test_an_uploaded_file_is_accepted(api, pets_api):
    from django.core.files.uploadedfile import SimpleUploadedFile

    upload = SimpleUploadedFile("pets.json", _spec_text(pets_api).encode(), "application/json")
    response = api.post(PREVIEW, {"file": upload}, format="multipart")
    assert response.status_code == 200
    assert len(response.json()["operations"]) == 8


def test_a_malformed_spec_answers_400_with_paths_and_messages(api):
    document = pets_spec()
    document["paths"]["/pets"]["get"]["parameters"][0]["in"] = "body-ish"
    response = api.post(PREVIEW, {"text": json.dumps(document)}, format="json")
    assert response.status_code == 400
    data = response.json()
    assert data["code"] == "invalid_spec"
    assert data["errors"][0]["path"] == '$.paths["/pets"].get.parameters[0]'
    assert data["errors"][0]["message"]


def test_text_that_is_not_json_or_yaml_answers_400(api):
    response = api.post(PREVIEW, {"text": "{not: [valid"}, format="json")
    assert response.status_code == 400
    assert response.json()["code"] == "invalid_spec"


def test_import_makes_one_tool_per_picked_operation_owned_by_the_user(api, owner, pets_api):
    data = _import(
        api, pets_api, [{"key": "GET /pets/{petId}", "name": "fetch_pet"}, {"key": "POST /pets"}]
    )
    assert sorted(t["name"] for t in data["tools"]) == ["create_pet", "fetch_pet"]
    tool = Tool.objects.get(name="fetch_pet")
    assert (tool.kind, tool.owner, tool.description) == ("openapi", owner, "One pet")
    assert tool.config["source_id"] == data["id"]
    assert ToolSource.objects.get(pk=data["id"]).document["info"]["title"] == "Pets API"


def test_names_must_be_snake_case_and_unique(api, pets_api):
    response = api.post(
        IMPORT,
        {
            "text": _spec_text(pets_api),
            "picks": [
                {"key": "GET /pets", "name": "Bad Name"},
                {"key": "POST /pets", "name": "x"},
                {"key": "GET /boom", "name": "x"},
                {"key": "GET /nope"},
            ],
        },
        format="json",
    )
    assert response.status_code == 400
    errors = {e["path"]: e["message"] for e in response.json()["errors"]}
    assert "snake_case" in errors["$.picks[0].name"]
    assert "picked twice" in errors["$.picks[2].name"]
    assert "no operation" in errors["$.picks[3].key"]
    assert not Tool.objects.filter(kind="openapi").exists()


def test_a_reserved_name_is_refused(api, pets_api):
    response = api.post(
        IMPORT,
        {"text": _spec_text(pets_api), "picks": [{"key": "GET /pets", "name": "new"}]},
        format="json",
    )
    assert response.status_code == 400
    assert "reserved" in response.json()["errors"][0]["message"]
    assert not Tool.objects.filter(name="new").exists()


def test_a_name_already_taken_is_refused(api, pets_api):
    _import(api, pets_api, [{"key": "GET /boom"}])
    response = api.post(
        IMPORT, {"text": _spec_text(pets_api), "picks": [{"key": "GET /boom"}]}, format="json"
    )
    assert response.status_code == 400
    assert "already exists" in response.json()["errors"][0]["message"]


def test_query_arrays_and_the_api_key_header_reach_the_api(
    api, owner, pets_api, pets_api_reachable
):
    _import(api, pets_api, [{"key": "GET /pets"}], credentials={"api_key": API_KEY})
    run = _run(owner, "list_pets", {"query": {"tags": ["good", "old"]}})
    assert run.status == "completed", run.error
    assert run.output["status"] == 200
    assert [p["name"] for p in run.output["body"]] == ["Rex"]


def test_a_nested_json_body_is_sent_as_json(api, owner, pets_api, pets_api_reachable):
    _import(api, pets_api, [{"key": "POST /pets"}], credentials={"api_key": API_KEY})
    body = {
        "name": "Kit",
        "kind": "cat",
        "tags": ["tiny"],
        "owner": {"name": "Ann", "address": {"city": "Oslo", "zip": "0150"}},
    }
    run = _run(owner, "create_pet", {"body": body})
    assert run.status == "completed", run.error
    assert run.output["status"] == 201
    assert run.output["body"]["owner"]["address"]["city"] == "Oslo"


def test_a_missing_api_key_is_the_apis_401_as_a_tool_error(
    api, owner, pets_api, pets_api_reachable
):
    _import(api, pets_api, [{"key": "GET /pets"}], credentials={"api_key": "wrong"})
    run = _run(owner, "list_pets", {})
    assert run.status == "failed"
    assert run.output["status"] == 401
    assert "HTTP 401" in run.error


def test_a_404_is_a_tool_error_with_status_and_body(api, owner, pets_api, pets_api_reachable):
    _import(api, pets_api, [{"key": "GET /pets/{petId}"}], credentials={"api_key": API_KEY})
    run = _run(owner, "get_pet", {"path": {"petId": "99"}})
    assert run.status == "failed"
    assert run.output == {
        "status": 404,
        "headers": run.output["headers"],
        "body": {"error": "no pet 99"},
    }
    assert "HTTP 404" in run.error and "no pet 99" in run.error


def test_a_500_is_a_tool_error_with_the_text_body(api, owner, pets_api, pets_api_reachable):
    _import(api, pets_api, [{"key": "GET /boom"}])
    run = _run(owner, "boom", {})
    assert run.status == "failed"
    assert run.output["status"] == 500
    assert run.output["body"] == "database on fire"


def test_path_values_are_escaped_so_they_cannot_leave_their_segment(
    api, owner, pets_api, pets_api_reachable
):
    _import(api, pets_api, [{"key": "GET /pets/{petId}"}], credentials={"api_key": API_KEY})
    run = _run(owner, "get_pet", {"path": {"petId": "../search?x=1"}})
    assert run.status == "failed"
    assert run.output["body"] == {"error": "no pet ../search?x=1"}


def test_query_styles_and_headers_follow_the_spec(api, owner, pets_api, pets_api_reachable):
    _import(api, pets_api, [{"key": "GET /search"}])
    run = _run(
        owner,
        "search",
        {
            "query": {"ids": [1, 2, 3], "words": ["a b", "c"], "filter": {"color": "red"}},
            "header": {"X-Trace": "t-1"},
        },
    )
    assert run.status == "completed", run.error
    assert run.output["body"]["query"] == ("ids=1%2C2%2C3&words=a%20b%7Cc&filter%5Bcolor%5D=red")
    assert run.output["body"]["trace"] == "t-1"


def test_basic_auth_comes_from_the_encrypted_credentials(api, owner, pets_api, pets_api_reachable):
    _import(
        api, pets_api, [{"key": "GET /whoami"}], credentials={"username": "ann", "password": "pw"}
    )
    tool = Tool.objects.get(name="who_am_i")
    assert "ann" not in tool.credentials_encrypted
    run = _run(owner, "who_am_i", {})
    assert run.status == "completed", run.error
    assert run.output["body"] == {"user": "ann"}


def test_redirects_are_not_followed_unless_the_config_allows(
    api, owner, pets_api, pets_api_reachable
):
    _import(api, pets_api, [{"key": "GET /moved"}])
    run = _run(owner, "moved", {})
    assert run.status == "failed"
    assert "redirect" in run.error
    tool = Tool.objects.get(name="moved")
    tool.config = {**tool.config, "follow_redirects": True}
    tool.save()
    run = _run(owner, "moved", {})
    assert run.status == "completed", run.error


def test_a_slow_api_past_the_timeout_is_a_tool_error(api, owner, pets_api, pets_api_reachable):
    _import(api, pets_api, [{"key": "GET /slow"}])
    Tool.objects.filter(name="slow").update(timeout_seconds=1)
    run = _run(owner, "slow", {})
    assert run.status == "failed"
    assert "1 s" in run.error


def test_an_api_that_is_down_is_a_tool_error(api, owner, private_network):
    from tests.conftest import free_port

    _import(api, private_network(f"http://127.0.0.1:{free_port()}"), [{"key": "GET /boom"}])
    run = _run(owner, "boom", {})
    assert run.status == "failed"
    assert "failed" in run.error.lower()


def test_credentials_are_never_in_responses(api, pets_api):
    data = _import(api, pets_api, [{"key": "GET /pets"}], credentials={"api_key": API_KEY})
    for url in ("/api/sources/", f"/api/sources/{data['id']}/", "/api/tools/list_pets/"):
        response = api.get(url)
        assert response.status_code == 200
        assert API_KEY not in response.content.decode()
    assert API_KEY not in json.dumps(data)


# --- re-import -----------------------------------------------------------------------------
def test_reimport_shows_a_per_operation_diff_then_updates_on_confirmation(api, owner, pets_api):
    data = _import(
        api, pets_api, [{"key": "GET /pets"}, {"key": "GET /boom"}, {"key": "GET /pets/{petId}"}]
    )
    changed = pets_spec(f"{pets_api}/api")
    changed["paths"]["/pets"]["get"]["parameters"].append(
        {"name": "sort", "in": "query", "schema": {"type": "string"}}
    )
    changed["paths"]["/pets"]["get"]["summary"] = "List the pets"
    del changed["paths"]["/boom"]
    changed["paths"]["/toys"] = {
        "get": {"operationId": "listToys", "responses": {"200": {"description": "ok"}}}
    }
    text = json.dumps(changed)
    diff = api.post(f"/api/sources/{data['id']}/openapi/diff", {"text": text}, format="json")
    assert diff.status_code == 200, diff.json()
    by_key = {op["key"]: op for op in diff.json()["operations"]}
    assert by_key["GET /pets"]["status"] == "changed"
    assert by_key["GET /pets"]["changes"] == [
        "summary/description changed",
        "query parameter added: sort",
    ]
    assert by_key["GET /boom"]["status"] == "removed"
    assert by_key["GET /toys"]["status"] == "added"
    assert by_key["GET /pets/{petId}"]["status"] == "unchanged"
    # Nothing changed yet.
    assert (
        "sort"
        not in Tool.objects.get(name="list_pets").input_schema["properties"]["query"]["properties"]
    )
    response = api.post(
        f"/api/sources/{data['id']}/openapi/reimport",
        {"text": text, "add": [{"key": "GET /toys"}]},
        format="json",
    )
    assert response.status_code == 200, response.json()
    assert response.json() == {
        "updated": ["list_pets"],
        "retired": ["boom"],
        "added": ["list_toys"],
    }
    tool = Tool.objects.get(name="list_pets")
    assert "sort" in tool.input_schema["properties"]["query"]["properties"]
    assert tool.description.startswith("List the pets")
    assert Tool.objects.get(name="boom").gone_at is not None


# --- who may do what -------------------------------------------------------------------------
def test_anonymous_callers_are_refused(anon_client):
    for url in (PREVIEW, IMPORT, "/api/sources/mcp/", "/api/sources/a2a/"):
        assert anon_client.post(url, {}, format="json").status_code in (401, 403)
    assert anon_client.get("/api/sources/").status_code in (401, 403)


def test_another_users_source_is_not_found(api, outsider_api, pets_api):
    data = _import(api, pets_api, [{"key": "GET /boom"}])
    assert outsider_api.get(f"/api/sources/{data['id']}/").status_code == 404
    assert outsider_api.get("/api/sources/").json() == []
    response = outsider_api.post(
        f"/api/sources/{data['id']}/openapi/diff", {"text": _spec_text(pets_api)}, format="json"
    )
    assert response.status_code == 404
    assert outsider_api.delete(f"/api/sources/{data['id']}/").status_code == 404
    assert api.delete(f"/api/sources/{data['id']}/").status_code == 204
    assert not Tool.objects.filter(name="boom").exists()


def test_every_sources_endpoint_refuses_anonymous_callers(anon_client, api, pets_api):
    data = _import(api, pets_api, [{"key": "GET /boom"}])
    sid = data["id"]
    for method, url in [
        ("get", "/api/sources/"),
        ("get", f"/api/sources/{sid}/"),
        ("delete", f"/api/sources/{sid}/"),
        ("post", PREVIEW),
        ("post", IMPORT),
        ("post", f"/api/sources/{sid}/openapi/diff"),
        ("post", f"/api/sources/{sid}/openapi/reimport"),
        ("post", "/api/sources/mcp/"),
        ("post", f"/api/sources/{sid}/mcp/refresh"),
        ("post", f"/api/sources/{sid}/mcp/pick"),
        ("post", "/api/sources/a2a/"),
    ]:
        response = getattr(anon_client, method)(url, {}, format="json")
        assert response.status_code in (401, 403), (method, url)
    assert ToolSource.objects.filter(pk=sid).exists()


def test_another_user_cannot_reimport_my_source(api, outsider_api, pets_api):
    data = _import(api, pets_api, [{"key": "GET /boom"}])
    response = outsider_api.post(
        f"/api/sources/{data['id']}/openapi/reimport", {"text": _spec_text(pets_api)}, format="json"
    )
    assert response.status_code == 404
