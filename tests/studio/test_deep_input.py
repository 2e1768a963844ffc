"""Deep structures that arrive other than as a REST body are bounded where they are read:
a tool's JSON Schema given to the serializer, JSON typed into the admin, an OpenAPI spec
(JSON or YAML), a model's streamed arguments, a tool's input_text."""

from __future__ import annotations

import json

import pytest
from django.test import Client
from django.urls import reverse

from agents_core.models import Agent
from agents_core.runtime.run.partial_json import IncrementalJSONParser, PartialJSONError
from tests.studio.db_state import db_fingerprint
from tools_app.models import Tool, ToolRun
from tools_app.serializers import ToolInputSerializer
from tools_app.sources.openapi_load import SpecError, spec_load

DEEP = 100_000


def deep_schema(levels: int) -> dict:
    schema: dict = {"type": "string"}
    for _ in range(levels):
        schema = {"type": "object", "properties": {"a": schema}}
    return schema


def test_the_tool_serializer_refuses_a_schema_nested_5000_deep_before_validating_it():
    serializer = ToolInputSerializer(
        data={"name": "deep_tool", "kind": "http", "input_schema": deep_schema(5_000)}
    )

    assert not serializer.is_valid()
    assert "nested more than 64 levels" in serializer.errors["input_schema"][0]
    assert serializer.errors["input_schema"][0].startswith("$.properties.a.properties.a")


def test_a_schema_within_the_depth_limit_is_still_checked_against_its_meta_schema():
    serializer = ToolInputSerializer(
        data={"name": "ok_tool", "kind": "http", "input_schema": deep_schema(30)}
    )
    serializer.is_valid()
    assert "input_schema" not in serializer.errors


# --- the admin ------------------------------------------------------------------------------
@pytest.fixture
def staff(admin_user) -> Client:
    client = Client()
    client.force_login(admin_user)
    return client


AGENT_FORM = {
    "slug": "admin-deep",
    "name": "Deep",
    "description": "",
    "model": "studio/scripted",
    "instructions": '"Be brief."',
    "default_options": "{}",
    "metadata": "{}",
    "notification_policy": "{}",
    "tool_bindings-TOTAL_FORMS": "0",
    "tool_bindings-INITIAL_FORMS": "0",
    "subagent_bindings-TOTAL_FORMS": "0",
    "subagent_bindings-INITIAL_FORMS": "0",
}


@pytest.mark.django_db
@pytest.mark.parametrize(
    "field,text,message",
    [
        ("metadata", '{"a": ' + "[" * DEEP + "]" * DEEP + "}", "nested more than 64 levels"),
        ("default_options", '{"n": ' + '{"a": ' * DEEP + "1" + "}" * DEEP + "}", "nested"),
        ("metadata", '{"note": "a\\u0000b"}', "$.note: the string contains a NUL"),
        ("notification_policy", '{"n": 1e999}', "$.n: the number is too large"),
    ],
)
def test_json_typed_into_the_agent_admin_is_a_form_error(staff, field, text, message):
    before = db_fingerprint()

    response = staff.post(reverse("admin:agents_core_agent_add"), {**AGENT_FORM, field: text})

    assert response.status_code == 200  # the form again, with its errors
    errors = response.context["adminform"].form.errors
    assert message in " ".join(errors[field]), errors
    assert db_fingerprint() == before


@pytest.mark.django_db
def test_a_deep_input_schema_typed_into_the_tool_admin_is_a_form_error(staff):
    form = {
        "name": "admin_deep",
        "description": "",
        "kind": "http",
        "input_schema": json.dumps({"type": "object", "properties": {"a": deep_schema(40)}}),
        "output_schema": "null",
        "execution_mode": "sync",
        "timeout_seconds": "30",
        "config": json.dumps({"url": "https://api.example.com/items", "method": "GET"}),
        "model_output": "{}",
    }

    response = staff.post(reverse("admin:tools_app_tool_add"), form)

    assert response.status_code == 200
    assert "nested more than 64 levels" in str(response.context["adminform"].form.errors)
    assert not Tool.objects.filter(name="admin_deep").exists()


@pytest.mark.django_db
def test_deep_json_instructions_in_the_admin_editor_are_a_form_error(staff, admin_user):
    agent = Agent.objects.create(
        slug="deep-editor",
        name="Deep",
        model="studio/scripted",
        instructions=["One.", "Two."],
        owner=admin_user,
    )
    url = reverse("admin:agents_core_agent_change", args=[agent.pk])
    page = staff.get(url)
    form = page.context["adminform"].form
    data = {name: form[name].value() for name in form.fields if form[name].value() is not None}
    data.update(
        {
            "editor_instructions": "[" * DEEP + "]" * DEEP,
            "tool_bindings-TOTAL_FORMS": "0",
            "tool_bindings-INITIAL_FORMS": "0",
            "subagent_bindings-TOTAL_FORMS": "0",
            "subagent_bindings-INITIAL_FORMS": "0",
        }
    )

    response = staff.post(url, data)

    assert response.status_code == 200
    assert "nested more than 64 levels" in str(response.context["adminform"].form.errors)
    agent.refresh_from_db()
    assert agent.instructions == ["One.", "Two."]


# --- OpenAPI specs ---------------------------------------------------------------------------
@pytest.mark.parametrize(
    "text,message",
    [
        ("[" * DEEP + "]" * DEEP, "nested more than 64 levels"),  # JSON
        ("a: " + "[" * DEEP + "]" * DEEP, "nested"),  # YAML flow style
        ('openapi: 3.0.0\ninfo: {title: "a\\0b"}', "$.info.title: the string contains a NUL"),
        (
            # Each alias repeats the one before ten times: 10^8 values from a few lines.
            "a: &a [x, x, x, x, x, x, x, x, x, x]\n"
            + "".join(
                f"{chr(98 + i)}: &{chr(98 + i)} [{', '.join(['*' + chr(97 + i)] * 10)}]\n"
                for i in range(7)
            ),
            "more than 1000000 values",
        ),
    ],
    ids=["deep-json", "deep-yaml", "nul-yaml", "yaml-aliases"],
)
def test_a_spec_that_is_too_deep_too_large_or_has_nul_is_a_spec_error(text, message):
    with pytest.raises(SpecError) as caught:
        spec_load(text)
    assert message in str(caught.value)


@pytest.mark.django_db
def test_a_deep_spec_pasted_as_text_is_a_400_naming_the_path(api):
    response = api.post(
        "/api/sources/openapi/preview", {"text": '{"a": ' + "[" * DEEP + "]" * DEEP + "}"}, "json"
    )

    assert response.status_code == 400
    body = response.json()
    assert body["code"] == "invalid_spec"
    assert body["errors"][0]["path"].startswith("$.a[0][0]")


# --- a model's arguments, a tool's input_text -----------------------------------------------
def test_streamed_arguments_nested_deeper_than_the_limit_are_a_parse_error():
    parser = IncrementalJSONParser()
    parser.feed('{"a": ' + "[" * 60)
    with pytest.raises(PartialJSONError, match="nested too deeply"):
        parser.feed("[" * 10)


def test_streamed_arguments_within_the_limit_parse():
    parser = IncrementalJSONParser()
    parser.feed('{"a": ' + "[" * 63 + "]" * 63 + "}")  # 64 levels, the limit
    value = parser.finish()["a"]
    for _ in range(62):
        value = value[0]
    assert value == []


@pytest.mark.django_db
@pytest.mark.parametrize(
    "input_text,code,path",
    [
        ('{"text": ' + "[" * DEEP + "]" * DEEP + "}", "too_deep", "$.text[0][0]"),
        ('{"text": "a\\u0000b"}', "nul_character", "$.text"),
        ('{"text": 1e999}', "number_out_of_range", "$.text"),
    ],
    ids=["deep", "nul", "number"],
)
def test_bad_input_text_is_a_rejected_run_with_the_path(api, owner, input_text, code, path):
    Tool.objects.create(name="text_tool", kind="http", owner=owner, input_schema={"type": "object"})

    response = api.post("/api/tools/text_tool/execute", {"input_text": input_text}, format="json")

    assert response.status_code == 400, response.content[:300]
    body = response.json()
    assert body["code"] == "invalid_input"
    assert body["errors"][0]["path"].startswith(path)
    # A rejected input is kept in the history, as typed (as syntax errors are).
    assert ToolRun.objects.get(id=body["id"]).input == input_text


@pytest.mark.django_db
def test_a_tool_output_nested_deeper_than_the_limit_is_a_failed_run(api, owner):
    code = "value = 'leaf'\nfor _ in range(100):\n    value = [value]\nreturn value"
    Tool.objects.create(
        name="deep_output", kind="python", owner=owner, config={"code": code}, timeout_seconds=20
    )

    response = api.post("/api/tools/deep_output/execute", {"input": {}}, format="json")

    assert response.status_code == 200, response.content[:300]
    body = response.json()
    assert body["status"] == "failed" and body["output"] is None
    assert "nested more than 64 levels" in body["error"]
