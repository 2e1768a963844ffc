"""What a connector tool costs over the HTTP call it makes, and what connecting costs.

    python -m bench.connectors            (or `make bench`, which runs every bench)

The Jira connector against its local stand-in (tests/tools_app/connectors/servers, on
127.0.0.1 in a thread of this process, put on the operator's allow-list for the run):

1. one `search/jql` call, median per call, side by side with ratios to the first row:
   httpx with one kept-alive client; httpx with a new client per call (what the tool
   does: a fresh connection each call); the tool through `run_tool` (input and output
   validation, the address guard and its pinned connection, the request recipe, basic
   auth from the encrypted credentials; no database); and through `tool_execute` (plus
   the ToolRun row);
2. connecting (`connector_add`: checks, the spec validated, a source and five tools
   written), median per connect, next to importing the same spec as text through the
   OpenAPI importer (`openapi_import`), which also parses it.
Everything the bench writes (a user, its sources, tools and runs) is deleted at the end.
"""

from __future__ import annotations

import base64
import os
from typing import Any

from bench.tool_overhead import median_seconds, table

REPEAT = int(os.environ.get("BENCH_REPEAT", "200"))
CONNECT_REPEAT = int(os.environ.get("BENCH_CONNECT_REPEAT", "20"))


def _user() -> Any:
    from django.contrib.auth import get_user_model
    from django.core.management import call_command

    call_command("migrate", verbosity=0, interactive=False)
    user, _ = get_user_model().objects.get_or_create(username="bench-connectors")
    return user


def _connect(user: Any, url: str) -> Any:
    from tests.tools_app.connectors.servers import API_TOKEN, EMAIL
    from tools_app.connectors.services import connector_add

    credentials = {"username": EMAIL, "password": API_TOKEN}
    return connector_add(
        user=user, slug="jira", data={"instance_url": url, "credentials": credentials}
    )


def _forget(user: Any) -> None:
    from tools_app.models import Tool, ToolRun, ToolSource

    ToolRun.objects.filter(created_by=user).delete()
    Tool.objects.filter(owner=user).delete()
    ToolSource.objects.filter(owner=user).delete()


def tool_calls(user: Any, url: str) -> None:
    import httpx
    from asgiref.sync import async_to_sync

    from tests.tools_app.connectors.servers import API_TOKEN, EMAIL
    from tools_app.execution import ExecutionContext, run_tool
    from tools_app.models import Tool
    from tools_app.services.execute import tool_execute

    _connect(user, url)
    tool = Tool.objects.get(owner=user, name="jira_search_issues")
    query = {"jql": "project = DEV", "maxResults": 2}
    payload = {"query": query}
    pair = base64.b64encode(f"{EMAIL}:{API_TOKEN}".encode()).decode()
    headers = {"Authorization": f"Basic {pair}", "Accept": "application/json"}
    endpoint = f"{url}/rest/api/3/search/jql"

    def fresh_client() -> None:
        with httpx.Client(trust_env=False) as client:
            client.get(endpoint, params=query, headers=headers).raise_for_status()

    def tool_run() -> None:
        outcome = async_to_sync(run_tool)(tool, payload, ExecutionContext(user=user))
        assert not outcome.error, outcome.error

    with httpx.Client(trust_env=False) as kept:
        alive = median_seconds(
            lambda: kept.get(endpoint, params=query, headers=headers).raise_for_status(), REPEAT
        )
    rows = [
        ("httpx, one kept-alive client", alive),
        ("httpx, a new client per call", median_seconds(fresh_client, REPEAT)),
        ("run_tool (connector tool, no database)", median_seconds(tool_run, REPEAT)),
        (
            "tool_execute (+ ToolRun row)",
            median_seconds(lambda: tool_execute(tool=tool, input=payload, user=user), REPEAT),
        ),
    ]
    table(f"Jira search through its connector tool, median of {REPEAT} calls", rows, alive)
    _forget(user)


def connects(user: Any, url: str) -> None:
    import yaml

    from tools_app.connectors.catalogue import catalogue
    from tools_app.sources.openapi import openapi_import

    jira = catalogue()["jira"]
    text = yaml.safe_dump(jira.document_for(jira.auth[0], url))
    picks = [{"key": key, "name": name} for key, name in jira.operations]

    def connect() -> None:
        _connect(user, url)
        _forget(user)

    def import_text() -> None:
        openapi_import(user=user, picks=picks, text=text, base_url=url)
        _forget(user)

    rows = [
        ("openapi_import of the spec as YAML text", median_seconds(import_text, CONNECT_REPEAT)),
        ("connector_add (Jira, five tools)", median_seconds(connect, CONNECT_REPEAT)),
    ]
    table(f"Connecting, median of {CONNECT_REPEAT}", rows, rows[0][1])


def main() -> None:
    from bench import setup_django

    setup_django()
    from django.conf import settings

    from tests.tools_app.connectors.servers import jira_app
    from tests.tools_app.sources.servers import serve

    user = _user()
    try:
        with serve(jira_app()) as url:
            netloc = url.removeprefix("http://")
            settings.STUDIO_PRIVATE_NETWORKS = [*settings.STUDIO_PRIVATE_NETWORKS, netloc]
            tool_calls(user, url)
            connects(user, url)
    finally:
        _forget(user)
        user.delete()


if __name__ == "__main__":
    main()
