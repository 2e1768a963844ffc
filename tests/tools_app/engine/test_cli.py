"""`manage.py tool execute`: result JSON on stdout, exit codes, --schema, --url."""

from __future__ import annotations

import json
import subprocess
import sys
from io import StringIO

import pytest
from django.core.management import call_command
from rest_framework.authtoken.models import Token

from tests.conftest import ROOT, child_process_env, free_port


def tool_cli(*args: str) -> tuple[int, dict | list | None, str]:
    out, err = StringIO(), StringIO()
    try:
        call_command("tool", "execute", *args, stdout=out, stderr=err)
        code = 0
    except SystemExit as exc:
        code = exc.code
    text = out.getvalue().strip()
    return code, json.loads(text) if text else None, err.getvalue()


@pytest.fixture
def doubler(make_tool, owner):
    return make_tool(
        name="cli_double",
        kind="python",
        owner=owner,
        timeout_seconds=10,
        config={"code": "return {'value': input['n'] * 2}"},
        input_schema={
            "type": "object",
            "properties": {"n": {"type": "integer"}},
            "required": ["n"],
        },
    )


def test_a_completed_run_prints_the_result_and_exits_0(doubler):
    assert tool_cli("cli_double", '{"n": 4}') == (0, {"value": 8}, "")


def test_a_crash_exits_1_with_the_reason_on_stderr(make_tool, owner):
    make_tool(name="cli_crash", kind="python", owner=owner, config={"code": "return 1/0"})

    code, out, err = tool_cli("cli_crash", "{}")

    assert code == 1 and out is None
    assert "ZeroDivisionError" in err


def test_bad_json_exits_2_with_line_and_column(doubler):
    code, out, err = tool_cli("cli_double", '{"n": }')

    assert code == 2
    assert "line 1, column 7" in err


def test_a_schema_error_exits_2_with_its_path(doubler):
    code, _, err = tool_cli("cli_double", '{"n": "four"}')

    assert code == 2
    assert "$.n: 'four' is not of type 'integer'" in err


def test_an_unknown_tool_exits_3(db):
    code, _, err = tool_cli("no_such_tool", "{}")

    assert code == 3 and "no_such_tool" in err


def test_web_fetch_prints_its_iserror_object_and_exits_1(system_tool):
    system_tool("web_fetch")

    code, out, _ = tool_cli("web_fetch", '{"url": "http://169.254.169.254/"}')

    assert code == 1
    assert out["isError"] is True and "Link Local (169.254.0.0/16, RFC 3927)" in out["error"]


def test_schema_prints_the_input_schema(doubler):
    code, out, _ = tool_cli("cli_double", "--schema")

    assert code == 0 and out["required"] == ["n"]


def test_user_limits_the_cli_to_that_users_tools(doubler, outsider):
    code, _, _ = tool_cli("cli_double", '{"n": 1}', "--user", "outsider")

    assert code == 3


@pytest.mark.django_db(transaction=True)
def test_the_real_command_line_exits_non_zero(doubler):
    done = subprocess.run(
        [sys.executable, "manage.py", "tool", "execute", "cli_double", '{"n": "x"}'],
        cwd=ROOT,
        env=child_process_env(),
        capture_output=True,
        text=True,
        timeout=120,
    )

    assert done.returncode == 2, done.stderr


@pytest.mark.django_db(transaction=True)
def test_url_runs_the_tool_through_a_running_studio(studio_server, doubler, owner):
    token = Token.objects.create(user=owner).key

    ok = tool_cli("cli_double", '{"n": 5}', "--url", studio_server, "--token", token)
    bad = tool_cli("cli_double", '{"n": 5', "--url", studio_server, "--token", token)
    schema = tool_cli("cli_double", "--schema", "--url", studio_server, "--token", token)
    anonymous = tool_cli("cli_double", '{"n": 5}', "--url", studio_server)

    assert ok == (0, {"value": 10}, "")
    assert bad[0] == 2 and "line 1" in bad[2]
    assert schema[1]["required"] == ["n"]
    assert anonymous[0] == 3


def test_url_to_a_studio_that_is_not_running_exits_3(doubler):
    code, _, err = tool_cli("cli_double", "{}", "--url", f"http://127.0.0.1:{free_port()}")

    assert code == 3 and "Cannot reach" in err


def test_rotate_credentials_re_encrypts_stored_credentials(make_tool, owner):
    from tools_app.crypto import credentials_get, credentials_set

    tool = make_tool(kind="http", owner=owner, config={"url": "https://x.test/"})
    credentials_set(tool, {"token": "t"})
    before = tool.credentials_encrypted
    out = StringIO()

    call_command("tool", "rotate-credentials", stdout=out)

    tool.refresh_from_db()
    assert "Re-encrypted the credentials of" in out.getvalue()
    assert tool.credentials_encrypted != before
    assert credentials_get(tool) == {"token": "t"}


def test_agent_as_tool_without_a_user_says_to_pass_one(make_tool, owner):
    make_tool(name="cli_agent", kind="agent", owner=owner, config={"agent": "anyone"})

    code, _, err = tool_cli("cli_agent", '{"prompt": "hi"}')

    assert code == 1
    assert "--user" in err
