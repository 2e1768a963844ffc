"""/api/tools/ and /api/tools/<name>/: CRUD, validation, ownership."""

from __future__ import annotations

import pytest

from agents_core.models import AgentTool
from tests.agents_core.factories import AgentToolFactory
from tests.tools_app.factories import ToolFactory
from tools_app.models import Tool

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("tool_types")]

WEATHER_SCHEMA = {
    "type": "object",
    "properties": {"city": {"type": "string"}},
    "required": ["city"],
}


def payload(**overrides):
    body = {
        "name": "get_weather",
        "description": "Current weather for a city.",
        "kind": "test_echo",
        "input_schema": WEATHER_SCHEMA,
        "output_schema": {"type": "object", "properties": {"temp_c": {"type": "number"}}},
        "execution_mode": "sync",
        "timeout_seconds": 10,
        "config": {"prefix": "> "},
    }
    body.update(overrides)
    return body


# --- create and read ------------------------------------------------------------------------
def test_it_creates_a_tool_owned_by_the_caller(api, owner):
    response = api.post("/api/tools/", payload(), format="json")

    assert response.status_code == 201, response.json()
    body = response.json()
    assert body["name"] == "get_weather"
    assert body["owner"] == "owner"
    assert body["source"] == "studio"
    assert body["has_credentials"] is False
    assert body["config"] == {"prefix": "> "}
    tool = Tool.objects.get(name="get_weather")
    assert tool.owner == owner
    assert tool.input_schema == WEATHER_SCHEMA


def test_a_tool_without_an_input_schema_gets_an_empty_object_schema(api):
    body = payload()
    del body["input_schema"]

    response = api.post("/api/tools/", body, format="json")

    assert response.status_code == 201, response.json()
    assert response.json()["input_schema"] == {"type": "object", "properties": {}}


def test_it_lists_own_and_code_tools_but_not_other_users_tools(api, owner, outsider):
    ToolFactory(name="mine", owner=owner)
    ToolFactory(name="shared_code_tool", code=True)
    ToolFactory(name="not_mine", owner=outsider)

    response = api.get("/api/tools/")

    assert response.status_code == 200
    names = {tool["name"] for tool in response.json()["results"]}
    assert {"mine", "shared_code_tool"} <= names
    assert "not_mine" not in names


def test_the_list_filters_by_kind_and_source(api, owner):
    ToolFactory(name="mine", owner=owner)
    ToolFactory(name="shared_code_tool", code=True)

    studio = api.get("/api/tools/?source=studio").json()["results"]
    echo = api.get("/api/tools/?kind=test_echo").json()["results"]

    assert [tool["name"] for tool in studio] == ["mine"]
    assert [tool["name"] for tool in echo] == ["mine"]


def test_it_reads_one_tool(api, owner):
    ToolFactory(name="mine", owner=owner, description="Mine.")

    response = api.get("/api/tools/mine/")

    assert response.status_code == 200
    assert response.json()["description"] == "Mine."


def test_a_code_tool_is_readable_by_everyone(outsider_api):
    ToolFactory(name="shared_code_tool", code=True)

    assert outsider_api.get("/api/tools/shared_code_tool/").status_code == 200


def test_token_auth_works(token_client):
    response = token_client.post("/api/tools/", payload(), format="json")

    assert response.status_code == 201
    assert token_client.get("/api/tools/get_weather/").status_code == 200


# --- update and delete ----------------------------------------------------------------------
def test_put_replaces_the_tool(api, owner):
    ToolFactory(name="mine", owner=owner, config={"prefix": "x"})

    response = api.put(
        "/api/tools/mine/", payload(name="mine", description="New words.", config={}), format="json"
    )

    assert response.status_code == 200, response.json()
    tool = Tool.objects.get(name="mine")
    assert tool.description == "New words."
    assert tool.config == {}
    assert tool.input_schema == WEATHER_SCHEMA


def test_put_may_leave_out_the_name_and_kind_to_keep_them(api, owner):
    ToolFactory(name="mine", owner=owner)
    body = payload(description="Kept name.")
    del body["name"], body["kind"]

    response = api.put("/api/tools/mine/", body, format="json")

    assert response.status_code == 200, response.json()
    tool = Tool.objects.get(name="mine")
    assert (tool.kind, tool.description) == ("test_echo", "Kept name.")


def test_patch_changes_only_the_given_fields(api, owner):
    ToolFactory(name="mine", owner=owner, description="Old.", timeout_seconds=5)

    response = api.patch("/api/tools/mine/", {"description": "New."}, format="json")

    assert response.status_code == 200, response.json()
    tool = Tool.objects.get(name="mine")
    assert (tool.description, tool.timeout_seconds) == ("New.", 5)


def test_patch_can_rename_a_tool_and_keeps_its_bindings(api, owner):
    binding = AgentToolFactory(tool=ToolFactory(name="old_name", owner=owner), key="lookup")

    response = api.patch("/api/tools/old_name/", {"name": "new_name"}, format="json")

    assert response.status_code == 200, response.json()
    binding.refresh_from_db()
    assert binding.tool.name == "new_name"
    assert api.get("/api/tools/old_name/").status_code == 404


def test_delete_removes_the_tool_and_its_bindings(api, owner):
    binding = AgentToolFactory(tool=ToolFactory(name="mine", owner=owner))

    response = api.delete("/api/tools/mine/")

    assert response.status_code == 204
    assert not Tool.objects.filter(name="mine").exists()
    assert not AgentTool.objects.filter(pk=binding.pk).exists()


# --- code tools are read-only ---------------------------------------------------------------
@pytest.mark.parametrize("method", ["put", "patch", "delete"])
def test_a_code_tool_cannot_be_changed_through_the_api(api, method):
    ToolFactory(name="shared_code_tool", code=True, description="From code.")

    response = getattr(api, method)(
        "/api/tools/shared_code_tool/", {"description": "Hacked."}, format="json"
    )

    assert response.status_code == 403
    assert response.json()["detail"] == (
        "Tool 'shared_code_tool' is defined in code; edit its overrides instead."
    )
    assert Tool.objects.get(name="shared_code_tool").description == "From code."


# --- ownership ------------------------------------------------------------------------------
@pytest.mark.parametrize("method", ["get", "put", "patch", "delete"])
def test_an_outsider_gets_404_for_someone_elses_tool(outsider_api, owner, method):
    ToolFactory(name="mine", owner=owner, description="Mine.")

    response = getattr(outsider_api, method)(
        "/api/tools/mine/", payload(name="mine", description="Taken over."), format="json"
    )

    assert response.status_code == 404
    assert Tool.objects.get(name="mine").description == "Mine."


@pytest.mark.parametrize(
    ("method", "url"),
    [
        ("get", "/api/tools/"),
        ("post", "/api/tools/"),
        ("get", "/api/tools/shared_code_tool/"),
        ("put", "/api/tools/shared_code_tool/"),
        ("patch", "/api/tools/shared_code_tool/"),
        ("delete", "/api/tools/shared_code_tool/"),
        ("get", "/api/tool-types/"),
    ],
)
def test_anonymous_requests_are_refused_with_401(anon_client, method, url):
    ToolFactory(name="shared_code_tool", code=True)

    response = getattr(anon_client, method)(url, payload(), format="json")

    assert response.status_code == 401
    assert response.has_header("WWW-Authenticate")
    assert Tool.objects.filter(name="get_weather").count() == 0


# --- validation -----------------------------------------------------------------------------
@pytest.mark.parametrize(
    "name", ["GetWeather", "get-weather", "1st_tool", "_private", "", "a" * 65]
)
def test_it_refuses_a_name_that_is_not_snake_case(api, name):
    count = Tool.objects.count()

    response = api.post("/api/tools/", payload(name=name), format="json")

    assert response.status_code == 400
    assert list(response.json()) == ["name"]
    assert Tool.objects.count() == count


def test_the_name_of_the_create_page_is_reserved(api):
    response = api.post("/api/tools/", payload(name="new"), format="json")

    assert response.status_code == 400
    assert "reserved" in response.json()["name"][0]
    assert not Tool.objects.filter(name="new").exists()


def test_a_bad_name_gets_a_message_saying_what_to_use(api):
    response = api.post("/api/tools/", payload(name="Get-Weather"), format="json")

    assert "snake_case" in response.json()["name"][0]


def test_it_refuses_a_duplicate_name_with_a_friendly_message(api, owner):
    # One of the user's own tools (another user's never clash: test_name_oracles.py).
    ToolFactory(name="get_weather", owner=owner)
    count = Tool.objects.count()

    response = api.post("/api/tools/", payload(), format="json")

    assert response.status_code == 400
    assert response.json() == {
        "name": ["A tool named 'get_weather' already exists; pick another name."]
    }
    assert Tool.objects.count() == count


def test_renaming_onto_a_taken_name_is_refused(api, owner):
    ToolFactory(name="first", owner=owner)
    ToolFactory(name="second", owner=owner)

    response = api.patch("/api/tools/second/", {"name": "first"}, format="json")

    assert response.status_code == 400
    assert "already exists" in response.json()["name"][0]
    assert Tool.objects.filter(name="second").exists()


def test_an_invalid_input_schema_is_refused_with_the_path_of_the_error(api):
    schema = {"type": "object", "properties": {"city": {"type": "strng"}}}

    response = api.post("/api/tools/", payload(input_schema=schema), format="json")

    assert response.status_code == 400
    (message,) = response.json()["input_schema"]
    assert message.startswith("$.properties.city.type: ")
    assert "'strng'" in message
    assert not Tool.objects.filter(name="get_weather").exists()


def test_an_invalid_output_schema_is_refused_with_the_path_of_the_error(api):
    schema = {"type": "object", "required": "temp_c"}

    response = api.post("/api/tools/", payload(output_schema=schema), format="json")

    assert response.status_code == 400
    assert response.json()["output_schema"] == ["$.required: 'temp_c' is not of type 'array'"]


def test_an_input_schema_that_is_not_an_object_schema_is_refused(api):
    response = api.post("/api/tools/", payload(input_schema={"type": "string"}), format="json")

    assert response.status_code == 400
    assert response.json()["input_schema"][0].startswith("$.type: the input schema must")


@pytest.mark.parametrize("schema", [[], "object", 3])
def test_a_schema_that_is_not_a_json_object_is_refused(api, schema):
    response = api.post("/api/tools/", payload(input_schema=schema), format="json")

    assert response.status_code == 400
    assert "must be a JSON object" in response.json()["input_schema"][0]


def test_an_unknown_schema_dialect_is_refused(api):
    schema = {**WEATHER_SCHEMA, "$schema": "https://example.com/my-own-draft"}

    response = api.post("/api/tools/", payload(input_schema=schema), format="json")

    assert response.status_code == 400
    assert response.json()["input_schema"][0].startswith("$.$schema: unknown JSON Schema dialect")


def test_an_unknown_kind_is_refused_and_the_known_ones_are_named(api):
    response = api.post("/api/tools/", payload(kind="smoke_signal"), format="json")

    assert response.status_code == 400
    (message,) = response.json()["kind"]
    assert message.startswith("Unknown tool type 'smoke_signal'. Known types: ")
    assert "test_echo" in message


def test_a_kind_users_may_not_create_is_refused(api):
    response = api.post("/api/tools/", payload(kind="test_builtin", config={}), format="json")

    assert response.status_code == 400
    assert "cannot be created here" in response.json()["kind"][0]


def test_the_type_validates_its_config_with_the_path_of_the_error(api):
    response = api.post("/api/tools/", payload(config={"repeat": 0}), format="json")

    assert response.status_code == 400
    assert response.json() == {"config": ["config.repeat: 0 is less than the minimum of 1"]}


def test_a_patch_of_the_config_alone_is_checked_by_the_tools_type(api, owner):
    ToolFactory(name="mine", owner=owner, config={"prefix": "x"})

    response = api.patch("/api/tools/mine/", {"config": {"colour": "red"}}, format="json")

    assert response.status_code == 400
    assert "colour" in response.json()["config"][0]
    assert Tool.objects.get(name="mine").config == {"prefix": "x"}


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("execution_mode", "eventually"),
        ("timeout_seconds", 0),
        ("timeout_seconds", "soon"),
        ("config", ["not", "an", "object"]),
        ("model_output", "text"),
    ],
)
def test_other_bad_fields_get_a_message_on_that_field(api, field, value):
    response = api.post("/api/tools/", payload(**{field: value}), format="json")

    assert response.status_code == 400
    assert field in response.json()
    assert not Tool.objects.filter(name="get_weather").exists()


def test_several_bad_fields_are_reported_together(api):
    response = api.post(
        "/api/tools/",
        payload(name="Bad Name", input_schema={"type": 5}, kind="nope"),
        format="json",
    )

    assert response.status_code == 400
    assert set(response.json()) == {"name", "input_schema", "kind"}


def test_a_failed_update_leaves_the_tool_as_it_was(api, owner):
    ToolFactory(name="mine", owner=owner, description="Old.", input_schema=WEATHER_SCHEMA)

    response = api.put(
        "/api/tools/mine/",
        payload(name="mine", description="New.", input_schema={"type": "object", "properties": 1}),
        format="json",
    )

    assert response.status_code == 400
    tool = Tool.objects.get(name="mine")
    assert (tool.description, tool.input_schema) == ("Old.", WEATHER_SCHEMA)


# --- tool types -----------------------------------------------------------------------------
def test_tool_types_lists_registered_kinds_with_their_config_schema(api):
    response = api.get("/api/tool-types/")

    assert response.status_code == 200
    by_kind = {item["kind"]: item for item in response.json()}
    assert by_kind["test_echo"] == {
        "kind": "test_echo",
        "label": "Echo (tests)",
        "config_schema": {
            "type": "object",
            "properties": {
                "prefix": {"type": "string"},
                "repeat": {"type": "integer", "minimum": 1},
            },
            "additionalProperties": False,
        },
        "credential_fields": ["token"],
        "creatable": True,
    }
    assert by_kind["test_builtin"]["creatable"] is False
