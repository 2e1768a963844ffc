"""REST: POST /api/tools/<name>/execute, run history, run detail, schema; ownership."""

from __future__ import annotations

import pytest

from agents_core.definitions import create_tool
from tools_app.models import ToolRun


def _shout(data, context=None):
    return {"text": data["text"].upper()}


@pytest.fixture
def shout(code_tool):
    return code_tool(
        create_tool(
            id="engine_shout",
            description="Upper-cases text.",
            execute=_shout,
            input_schema={
                "type": "object",
                "properties": {"text": {"type": "string"}},
                "required": ["text"],
                "additionalProperties": False,
            },
            output_schema={"type": "object", "properties": {"text": {"type": "string"}}},
        )
    )


@pytest.fixture
def private_tool(make_tool, owner):
    return make_tool(
        name="owner_private",
        kind="python",
        owner=owner,
        config={"code": "return input"},
        timeout_seconds=10,
    )


def test_execute_returns_the_recorded_run(api, shout):
    response = api.post("/api/tools/engine_shout/execute", {"input": {"text": "hi"}}, format="json")

    assert response.status_code == 200
    body = response.json()
    assert body["status"] == "completed"
    assert body["output"] == {"text": "HI"}
    assert body["tool"] == "engine_shout" and body["mode"] == "sync"
    assert ToolRun.objects.get(id=body["id"]).output == {"text": "HI"}


def test_a_token_client_can_execute(token_client, shout):
    response = token_client.post(
        "/api/tools/engine_shout/execute", {"input": {"text": "a"}}, format="json"
    )

    assert response.status_code == 200


def test_input_text_with_a_syntax_error_is_400_with_line_and_column(api, shout):
    response = api.post(
        "/api/tools/engine_shout/execute",
        {"input_text": '{"text":\n  "unterminated}'},
        format="json",
    )

    assert response.status_code == 400
    body = response.json()
    assert body["code"] == "invalid_input"
    assert body["errors"][0]["line"] == 2
    assert "line 2, column 3" in body["detail"]
    assert body["status"] == "failed" and body["id"]


def test_schema_errors_are_400_with_every_path(api, shout):
    response = api.post(
        "/api/tools/engine_shout/execute", {"input": {"text": 5, "loud": True}}, format="json"
    )

    assert response.status_code == 400
    assert {e["path"] for e in response.json()["errors"]} == {"$", "$.text"}


def test_a_body_without_input_is_a_field_error(api, shout):
    response = api.post("/api/tools/engine_shout/execute", {}, format="json")

    assert response.status_code == 400
    assert "input" in response.json()


def test_a_failed_run_is_a_200_with_status_failed_not_a_500(api, make_tool, owner):
    make_tool(name="crashes", kind="python", owner=owner, config={"code": "return 1/0"})

    response = api.post("/api/tools/crashes/execute", {"input": {}}, format="json")

    assert response.status_code == 200
    assert response.json()["status"] == "failed"
    assert response.json()["error"] == "ZeroDivisionError: division by zero"


def test_async_mode_answers_202_with_a_pending_run(api, shout):
    response = api.post(
        "/api/tools/engine_shout/execute?mode=async", {"input": {"text": "x"}}, format="json"
    )

    assert response.status_code == 202
    assert response.json()["status"] == "pending"
    assert response.json()["mode"] == "async"


def test_an_unknown_mode_is_refused(api, shout):
    response = api.post(
        "/api/tools/engine_shout/execute?mode=later", {"input": {"text": "x"}}, format="json"
    )

    assert response.status_code == 400


def test_anonymous_callers_are_refused_everywhere(anon_client, shout, api):
    run_id = api.post(
        "/api/tools/engine_shout/execute", {"input": {"text": "x"}}, format="json"
    ).json()["id"]

    for response in [
        anon_client.post(
            "/api/tools/engine_shout/execute", {"input": {"text": "x"}}, format="json"
        ),
        anon_client.get("/api/tools/engine_shout/runs/"),
        anon_client.get(f"/api/tool-runs/{run_id}/"),
        anon_client.get("/api/tools/engine_shout/schema"),
    ]:
        assert response.status_code in (401, 403)


def test_another_users_studio_tool_is_404_everywhere(outsider_api, private_tool):
    assert (
        outsider_api.post(
            "/api/tools/owner_private/execute", {"input": {}}, format="json"
        ).status_code
        == 404
    )
    assert outsider_api.get("/api/tools/owner_private/runs/").status_code == 404
    assert outsider_api.get("/api/tools/owner_private/schema").status_code == 404


def test_users_see_only_their_own_runs(api, outsider_api, shout):
    mine = api.post(
        "/api/tools/engine_shout/execute", {"input": {"text": "mine"}}, format="json"
    ).json()
    theirs = outsider_api.post(
        "/api/tools/engine_shout/execute", {"input": {"text": "theirs"}}, format="json"
    ).json()

    history = api.get("/api/tools/engine_shout/runs/").json()

    assert [run["id"] for run in history["results"]] == [mine["id"]]
    assert api.get(f"/api/tool-runs/{mine['id']}/").json()["output"] == {"text": "MINE"}
    assert api.get(f"/api/tool-runs/{theirs['id']}/").status_code == 404


def test_the_schema_endpoint_gives_input_output_and_resume_schemas(api, system_tool):
    system_tool("ask_user")

    body = api.get("/api/tools/ask_user/schema").json()

    assert body["input_schema"]["required"] == ["question"]
    assert body["resume_schema"]["required"] == ["answer"]
    assert body["kind"] == "system"
