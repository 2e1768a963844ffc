"""Reading specs: validation errors users can act on, the input schema's full shape,
refs that loop, names."""

from __future__ import annotations

import json

import pytest
from jsonschema import Draft202012Validator

from tests.tools_app.sources.servers import pets_spec
from tools_app.sources.openapi_load import SpecError, spec_load
from tools_app.sources.openapi_spec import operation_name, spec_operations
from tools_app.sources.openapi_validate import spec_validate


def _ops(document: dict) -> dict:
    return {op.key: op for op in spec_operations(document, spec_url="http://127.0.0.1:1/x.json")}


def test_a_valid_spec_has_no_errors_and_lists_every_operation():
    document = pets_spec()
    assert spec_validate(document) == []
    assert sorted(_ops(document)) == [
        "GET /boom",
        "GET /moved",
        "GET /pets",
        "GET /pets/{petId}",
        "GET /search",
        "GET /slow",
        "GET /whoami",
        "POST /pets",
    ]


def test_yaml_is_read_as_well_as_json():
    text = "openapi: 3.1.0\ninfo: {title: Y, version: '1'}\npaths: {}\n"
    assert spec_load(text)["openapi"] == "3.1.0"


def test_text_that_is_not_a_spec_is_refused_with_its_line():
    with pytest.raises(SpecError, match="line 2"):
        spec_load("openapi: 3.0.0\n  info: [unclosed\n")


def test_validation_errors_name_the_place_and_the_reason():
    document = pets_spec()
    del document["paths"]["/pets"]["get"]["responses"]
    document["paths"]["/pets/{petId}"]["parameters"][0].pop("required")
    errors = spec_validate(document)
    messages = {e["path"]: e["message"] for e in errors}
    assert messages['$.paths["/pets"].get'] == "'responses' is a required property"
    assert "'required' is a required property" in messages['$.paths["/pets/{petId}"].parameters[0]']


def test_a_ref_to_nothing_is_reported_where_it_is():
    document = pets_spec()
    document["components"]["schemas"]["Pet"]["properties"]["owner"]["$ref"] = "#/nowhere/Owner"
    assert spec_validate(document) == [
        {
            "path": '$.components.schemas.Pet.properties.owner["$ref"]',
            "message": "$ref '#/nowhere/Owner' points to nothing",
        }
    ]


def test_an_external_ref_is_refused_rather_than_fetched():
    document = pets_spec()
    document["components"]["schemas"]["Owner"] = {"$ref": "http://169.254.169.254/owner.json"}
    [error] = spec_validate(document)
    assert "external $ref" in error["message"]


def test_a_document_without_a_version_says_what_is_expected():
    [error] = spec_validate({"info": {"title": "x"}, "paths": {}})
    assert error["path"] == "$"
    assert "openapi" in error["message"]


def test_the_input_schema_groups_parameters_and_keeps_the_body_shape():
    ops = _ops(pets_spec())
    get_pet = ops["GET /pets/{petId}"].input_schema
    assert get_pet["properties"]["path"]["required"] == ["petId"]
    assert get_pet["required"] == ["path"]
    create = ops["POST /pets"].input_schema
    body = create["properties"]["body"]
    assert body["properties"]["kind"]["enum"] == ["dog", "cat"]
    assert body["properties"]["owner"]["properties"]["address"]["properties"]["city"] == {
        "type": "string"
    }
    assert create["required"] == ["body"]
    search = ops["GET /search"].input_schema["properties"]
    assert search["query"]["properties"]["ids"]["items"] == {"type": "integer"}
    assert search["header"]["properties"]["X-Trace"] == {"type": "string"}
    listing = ops["GET /pets"]
    assert listing.output_schema["properties"]["body"]["items"]["properties"]["name"] == {
        "type": "string"
    }
    assert listing.tool_description == "List pets\n\nPets with all the given tags."


def test_one_of_any_of_all_of_and_nullable_become_json_schema():
    document = pets_spec()
    document["components"]["schemas"]["NewPet"]["properties"]["size"] = {
        "oneOf": [{"type": "integer"}, {"type": "string", "enum": ["S", "M"]}]
    }
    document["components"]["schemas"]["NewPet"]["properties"]["note"] = {
        "type": "string",
        "nullable": True,
    }
    document["components"]["schemas"]["NewPet"]["properties"]["extra"] = {
        "allOf": [{"$ref": "#/components/schemas/Owner"}, {"anyOf": [{"type": "object"}]}]
    }
    assert spec_validate(document) == []
    body = _ops(document)["POST /pets"].input_schema["properties"]["body"]
    assert body["properties"]["size"]["oneOf"][1]["enum"] == ["S", "M"]
    assert body["properties"]["note"]["type"] == ["string", "null"]
    assert body["properties"]["extra"]["allOf"][0]["properties"]["name"] == {"type": "string"}


def test_refs_that_loop_become_defs_and_the_schema_still_validates():
    document = pets_spec()
    schemas = document["components"]["schemas"]
    schemas["Node"] = {
        "type": "object",
        "properties": {
            "name": {"type": "string"},
            "children": {"type": "array", "items": {"$ref": "#/components/schemas/Node"}},
        },
    }
    schemas["A"] = {"type": "object", "properties": {"b": {"$ref": "#/components/schemas/B"}}}
    schemas["B"] = {
        "type": "object",
        "properties": {"a": {"$ref": "#/components/schemas/A"}, "n": {"type": "integer"}},
    }
    schemas["NewPet"]["properties"]["family"] = {"$ref": "#/components/schemas/Node"}
    schemas["NewPet"]["properties"]["pair"] = {"$ref": "#/components/schemas/A"}
    assert spec_validate(document) == []
    schema = _ops(document)["POST /pets"].input_schema
    assert schema["$defs"]["Node"]["properties"]["children"]["items"] == {"$ref": "#/$defs/Node"}
    assert json.dumps(schema).count('"$ref"') >= 2
    validator = Draft202012Validator(schema)
    good = {
        "body": {
            "name": "a",
            "kind": "cat",
            "family": {"name": "x", "children": [{"name": "y", "children": [{"name": "z"}]}]},
            "pair": {"b": {"a": {"b": {"n": 1}}}},
        }
    }
    assert list(validator.iter_errors(good)) == []
    bad = {"body": {"name": "a", "kind": "cat", "family": {"children": [{"name": 5}]}}}
    [error] = validator.iter_errors(bad)
    assert list(error.absolute_path) == ["body", "family", "children", 0, "name"]


def test_a_schema_that_is_its_own_ref_does_not_hang():
    document = pets_spec()
    document["components"]["schemas"]["Loop"] = {"$ref": "#/components/schemas/Loop2"}
    document["components"]["schemas"]["Loop2"] = {"$ref": "#/components/schemas/Loop"}
    document["components"]["schemas"]["NewPet"]["properties"]["loop"] = {
        "$ref": "#/components/schemas/Loop"
    }
    # Whatever the validator says about it, reading the operations terminates.
    spec_validate(document)
    assert "POST /pets" in _ops(document)


def test_swagger_2_is_read_into_the_same_shape():
    document = {
        "swagger": "2.0",
        "info": {"title": "Old", "version": "1"},
        "host": "127.0.0.1:9",
        "basePath": "/v1",
        "schemes": ["http"],
        "securityDefinitions": {"k": {"type": "apiKey", "in": "query", "name": "key"}},
        "security": [{"k": []}],
        "definitions": {"Item": {"type": "object", "properties": {"n": {"type": "integer"}}}},
        "paths": {
            "/items/{id}": {
                "put": {
                    "operationId": "put-item",
                    "parameters": [
                        {"name": "id", "in": "path", "required": True, "type": "string"},
                        {
                            "name": "tags",
                            "in": "query",
                            "type": "array",
                            "items": {"type": "string"},
                            "collectionFormat": "multi",
                        },
                        {
                            "name": "body",
                            "in": "body",
                            "required": True,
                            "schema": {"$ref": "#/definitions/Item"},
                        },
                    ],
                    "responses": {
                        "200": {"description": "ok", "schema": {"$ref": "#/definitions/Item"}}
                    },
                }
            }
        },
    }
    assert spec_validate(document) == []
    [op] = spec_operations(document)
    assert op.suggested_name == "put_item"
    assert op.config["base_url"] == "http://127.0.0.1:9/v1"
    assert op.config["auth"] == {"type": "api_key", "in": "query", "name": "key", "scheme": "k"}
    assert op.input_schema["properties"]["body"]["properties"]["n"] == {"type": "integer"}
    assert op.input_schema["properties"]["query"]["properties"]["tags"]["items"] == {
        "type": "string"
    }
    tags = next(p for p in op.config["parameters"] if p["name"] == "tags")
    assert (tags["style"], tags["explode"]) == ("form", True)
    assert op.output_schema["properties"]["body"]["properties"]["n"] == {"type": "integer"}


def test_names_come_from_the_operation_id_in_snake_case_or_from_method_and_path():
    assert operation_name("get", "/x", "getPetByID") == "get_pet_by_id"
    assert operation_name("get", "/x", "list-all.things") == "list_all_things"
    assert operation_name("delete", "/pets/{petId}/toys", "") == "delete_pets_pet_id_toys"
    assert operation_name("get", "/", "2fast") == "op_2fast"


def test_an_operations_own_servers_win_and_unsupported_bodies_are_noted():
    document = pets_spec("http://127.0.0.1:1/api")
    document["paths"]["/search"]["servers"] = [
        {"url": "http://127.0.0.1:2/{v}", "variables": {"v": {"default": "v2"}}}
    ]
    document["paths"]["/pets"]["post"]["requestBody"]["content"] = {
        "multipart/form-data": {"schema": {"type": "object"}}
    }
    assert spec_validate(document) == []
    ops = _ops(document)
    assert ops["GET /search"].config["base_url"] == "http://127.0.0.1:2/v2"
    assert ops["GET /pets"].config["base_url"] == "http://127.0.0.1:1/api"
    assert ops["POST /pets"].notes == [
        "request body type not supported (only JSON and form bodies): multipart/form-data"
    ]
    assert "body" not in ops["POST /pets"].input_schema["properties"]


def test_every_declared_server_is_offered_resolved_and_in_order():
    from tools_app.sources.openapi_spec import server_urls

    document = pets_spec("/api")
    document["servers"] = [
        {"url": "/api"},
        {
            "url": "https://{region}.pets.example/v1",
            "variables": {"region": {"default": "eu", "enum": ["eu", "us"]}},
        },
        {"url": "/api/"},  # the same as the first once resolved
    ]
    assert server_urls(document, spec_url="http://127.0.0.1:8/spec.json") == [
        "http://127.0.0.1:8/api",
        "https://eu.pets.example/v1",
    ]
    swagger = {
        "swagger": "2.0",
        "host": "pets.example",
        "basePath": "/v2",
        "schemes": ["https", "http"],
        "info": {"title": "P", "version": "1"},
        "paths": {},
    }
    assert server_urls(swagger) == ["https://pets.example/v2", "http://pets.example/v2"]
