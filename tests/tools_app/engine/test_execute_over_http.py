"""REST execute over real HTTP to Daphne (every middleware async, the view in a thread):
token auth, ownership and the recorded run with its trace span, as a script sees them."""

from __future__ import annotations

import httpx
import pytest
from rest_framework.authtoken.models import Token

from tests.tools_app.engine.conftest import synced_row
from tools_app.demo import unit_convert
from tools_app.models import ToolRun
from traces.models import Span

pytestmark = pytest.mark.django_db(transaction=True)
INPUT = {"value": 3, "from": "km", "to": "mi"}


def _client(base: str, key: str | None) -> httpx.Client:
    headers = {"Authorization": f"Token {key}"} if key else {}
    return httpx.Client(base_url=base, trust_env=False, timeout=30, headers=headers)


def test_execute_over_http_writes_its_run_row_and_span(studio_server, owner):
    synced_row(unit_convert)
    key = Token.objects.create(user=owner).key

    with _client(studio_server, key) as http:
        answers = [
            http.post("/api/tools/unit_convert/execute", json={"input": INPUT}) for _ in range(5)
        ]

    assert [answer.status_code for answer in answers] == [200] * 5
    body = answers[-1].json()
    assert body["status"] == "completed" and body["output"] == {"value": 1.864114, "unit": "mi"}
    run = ToolRun.objects.get(id=body["id"])
    assert run.created_by == owner and run.output == body["output"]
    assert Span.objects.filter(tool_run_id=run.id, kind="tool").count() == 1
    assert ToolRun.objects.filter(created_by=owner).count() == 5


def test_execute_over_http_refuses_a_bad_token_and_writes_nothing(studio_server, owner):
    synced_row(unit_convert)

    with _client(studio_server, "not-a-token") as http:
        answer = http.post("/api/tools/unit_convert/execute", json={"input": INPUT})
    with _client(studio_server, None) as http:
        anonymous = http.post("/api/tools/unit_convert/execute", json={"input": INPUT})

    assert answer.status_code == 401 and anonymous.status_code == 401
    assert not ToolRun.objects.exists()


def test_execute_over_http_answers_404_for_another_users_tool(
    studio_server, make_tool, owner, outsider
):
    make_tool(name="owner_private", kind="http", owner=owner)
    key = Token.objects.create(user=outsider).key

    with _client(studio_server, key) as http:
        answer = http.post("/api/tools/owner_private/execute", json={"input": {}})

    assert answer.status_code == 404
    assert answer.json()["code"] == "not_found"
    assert not ToolRun.objects.exists()


def test_a_page_over_http_still_sends_a_signed_out_visitor_to_the_login(studio_server):
    with _client(studio_server, None) as http:
        answer = http.get("/tools/")

    assert answer.status_code == 302
    assert answer.headers["location"].startswith("/accounts/login/")
