"""Jira and Confluence connectors against local stand-ins of their Cloud APIs."""

from __future__ import annotations

import base64

import pytest

from tests.tools_app.connectors.servers import API_TOKEN, EMAIL, confluence_app, jira_app

pytestmark = pytest.mark.django_db

BASIC = "Basic " + base64.b64encode(f"{EMAIL}:{API_TOKEN}".encode()).decode()
CREDENTIALS = {"username": EMAIL, "password": API_TOKEN}
ADF = {"type": "doc", "version": 1, "content": [{"type": "paragraph", "content": []}]}


@pytest.fixture
def jira(connect):
    return connect("jira", jira_app(), auth="api_token", credentials=CREDENTIALS)[1]


@pytest.fixture
def confluence(connect):
    return connect("confluence", confluence_app(), auth="api_token", credentials=CREDENTIALS)[1]


def test_jira_search_sends_jql_fields_and_basic_auth_and_pages_by_token(jira, run_tool):
    query = {"jql": "project = DEV ORDER BY updated DESC", "maxResults": 2}
    first = run_tool("jira_search_issues", {"query": {**query, "fields": ["summary", "status"]}})
    assert first.status == "completed", first.error
    sent = jira.state.requests[-1]
    assert (sent["method"], sent["path"]) == ("GET", "/rest/api/3/search/jql")
    assert sent["query"] == {
        "jql": "project = DEV ORDER BY updated DESC",
        "maxResults": "2",
        "fields": "summary,status",
    }
    assert sent["headers"]["authorization"] == BASIC
    body = first.output["body"]
    assert [i["key"] for i in body["issues"]] == ["DEV-1", "DEV-2"]
    assert body["issues"][0]["fields"] == {"summary": "Issue 1", "status": {"name": "To Do"}}
    assert body["isLast"] is False
    keys = [i["key"] for i in body["issues"]]
    while body.get("nextPageToken"):
        page = run_tool(
            "jira_search_issues", {"query": {**query, "nextPageToken": body["nextPageToken"]}}
        )
        body = page.output["body"]
        keys += [i["key"] for i in body["issues"]]
    assert keys == [f"DEV-{n}" for n in range(1, 6)]


def test_jira_errors_are_tool_errors_with_the_error_messages(jira, run_tool):
    run = run_tool("jira_search_issues", {"query": {"jql": "badfield = 1"}})
    assert run.status == "failed"
    assert run.output["status"] == 400
    assert run.output["body"]["errorMessages"] == [
        "Field 'badfield' does not exist or you do not have permission to view it."
    ]
    missing = run_tool("jira_get_issue", {"path": {"issueIdOrKey": "DEV-99"}})
    assert missing.status == "failed" and "HTTP 404" in missing.error
    assert "Issue does not exist" in missing.error


def test_jira_get_create_and_comment(jira, run_tool):
    run = run_tool("jira_get_issue", {"path": {"issueIdOrKey": "DEV-3"}})
    assert run.status == "completed", run.error
    assert run.output["body"]["fields"]["summary"] == "Issue 3"
    assert jira.state.requests[-1]["path"] == "/rest/api/3/issue/DEV-3"

    fields = {"project": {"key": "DEV"}, "issuetype": {"name": "Bug"}, "summary": "Login fails"}
    created = run_tool("jira_create_issue", {"body": {"fields": {**fields, "description": ADF}}})
    assert created.status == "completed", created.error
    assert created.output["status"] == 201
    assert created.output["body"]["key"] == "DEV-6"
    sent = jira.state.requests[-1]
    assert (sent["method"], sent["path"]) == ("POST", "/rest/api/3/issue")
    assert sent["json"]["fields"]["issuetype"] == {"name": "Bug"}
    assert sent["headers"]["content-type"] == "application/json"

    comment = run_tool(
        "jira_add_comment", {"path": {"issueIdOrKey": "DEV-6"}, "body": {"body": ADF}}
    )
    assert comment.status == "completed", comment.error
    assert comment.output["status"] == 201
    assert jira.state.requests[-1]["path"] == "/rest/api/3/issue/DEV-6/comment"


def test_jira_a_missing_summary_is_the_apis_field_error(jira, run_tool):
    # The tool's schema wants a summary; the API's own answer when it is empty.
    body = {"fields": {"project": {"key": "DEV"}, "issuetype": {"name": "Bug"}, "summary": ""}}
    run = run_tool("jira_create_issue", {"body": body})
    assert run.status == "failed"
    assert run.output["body"] == {
        "errorMessages": [],
        "errors": {"summary": "You must specify a summary of the issue."},
    }


def test_jira_comments_page_with_start_at_max_results_and_total(jira, run_tool):
    seen, start = [], 0
    while True:
        run = run_tool(
            "jira_list_comments",
            {"path": {"issueIdOrKey": "DEV-1"}, "query": {"startAt": start, "maxResults": 3}},
        )
        assert run.status == "completed", run.error
        body = run.output["body"]
        seen += [c["id"] for c in body["comments"]]
        start = body["startAt"] + body["maxResults"]
        if start >= body["total"]:
            break
    assert seen == [str(n) for n in range(7)]
    assert jira.state.requests[-1]["query"] == {"startAt": "6", "maxResults": "3"}


def test_confluence_search_get_spaces_and_create(confluence, run_tool):
    run = run_tool(
        "confluence_search", {"query": {"cql": 'type = page AND text ~ "runbook"', "limit": 2}}
    )
    assert run.status == "completed", run.error
    body = run.output["body"]
    assert (body["totalSize"], body["size"]) == (3, 2)
    assert "cursor=c2" in body["_links"]["next"]
    sent = confluence.state.requests[-1]
    assert (sent["path"], sent["query"]["cql"]) == (
        "/wiki/rest/api/search",
        'type = page AND text ~ "runbook"',
    )
    assert sent["headers"]["authorization"] == BASIC

    page = run_tool(
        "confluence_get_page", {"path": {"id": "102"}, "query": {"body-format": "storage"}}
    )
    assert page.status == "completed", page.error
    assert page.output["body"]["body"]["storage"]["value"] == "<p>Step 102</p>"
    assert confluence.state.requests[-1]["raw_query"] == "body-format=storage"

    spaces = run_tool("confluence_list_spaces", {"query": {"keys": ["OPS"]}})
    assert [s["id"] for s in spaces.output["body"]["results"]] == ["98306"]

    body = {
        "spaceId": "98306",
        "title": "New runbook",
        "body": {"representation": "storage", "value": "<p>x</p>"},
    }
    created = run_tool("confluence_create_page", {"body": body})
    assert created.status == "completed", created.error
    assert (created.output["status"], created.output["body"]["id"]) == (200, "104")
    assert confluence.state.requests[-1]["json"] == body


def test_confluence_errors_keep_their_v1_and_v2_shapes(confluence, run_tool):
    bad = run_tool("confluence_search", {"query": {"cql": "nonsense"}})
    assert bad.status == "failed"
    assert bad.output["body"]["message"] == "Could not parse cql : nonsense"
    missing = run_tool("confluence_get_page", {"path": {"id": "999"}})
    assert missing.status == "failed"
    assert missing.output["body"]["errors"][0]["code"] == "NOT_FOUND"
