"""ServiceNow (basic auth) and Salesforce (access token) connectors against local
stand-ins of the ServiceNow Table API and the Salesforce REST API."""

from __future__ import annotations

import base64

import pytest

from tests.tools_app.connectors.servers import (
    BEARER,
    SN_PASSWORD,
    SN_USER,
    salesforce_app,
    servicenow_app,
)

pytestmark = pytest.mark.django_db


@pytest.fixture
def servicenow(connect):
    credentials = {"username": SN_USER, "password": SN_PASSWORD}
    return connect("servicenow", servicenow_app(), auth="basic", credentials=credentials)[1]


@pytest.fixture
def salesforce(connect):
    return connect(
        "salesforce", salesforce_app(), auth="access_token", credentials={"token": BEARER}
    )[1]


def test_servicenow_lists_incidents_by_offset_with_the_link_header(servicenow, run_tool):
    query = {"sysparm_query": "active=true^priority=1", "sysparm_limit": 2}
    numbers, offset = [], 0
    while True:
        run = run_tool("servicenow_list_incidents", {"query": {**query, "sysparm_offset": offset}})
        assert run.status == "completed", run.error
        numbers += [r["number"] for r in run.output["body"]["result"]]
        total = int(run.output["headers"]["x-total-count"])
        if 'rel="next"' not in run.output["headers"]["link"]:
            break
        offset += 2
    assert total == 3
    assert numbers == ["INC0010002", "INC0010004", "INC0010006"]
    sent = servicenow.state.requests[0]
    assert (sent["method"], sent["path"]) == ("GET", "/api/now/table/incident")
    assert sent["query"] == {
        "sysparm_query": "active=true^priority=1",
        "sysparm_limit": "2",
        "sysparm_offset": "0",
    }
    expected = base64.b64encode(f"{SN_USER}:{SN_PASSWORD}".encode()).decode()
    assert sent["headers"]["authorization"] == f"Basic {expected}"


def test_servicenow_get_and_create_an_incident(servicenow, run_tool):
    sys_id = f"{3:032x}"
    run = run_tool("servicenow_get_incident", {"path": {"sys_id": sys_id}})
    assert run.status == "completed", run.error
    assert run.output["body"]["result"]["number"] == "INC0010003"

    body = {"short_description": "Printer on fire", "urgency": "1", "impact": "2"}
    created = run_tool("servicenow_create_incident", {"body": body})
    assert created.status == "completed", created.error
    assert created.output["status"] == 201
    assert created.output["body"]["result"]["number"] == "INC0010099"
    assert servicenow.state.requests[-1]["json"] == body


def test_servicenow_errors_keep_their_shape(servicenow, run_tool):
    run = run_tool("servicenow_get_incident", {"path": {"sys_id": "f" * 32}})
    assert run.status == "failed"
    assert run.output["status"] == 404
    assert run.output["body"] == {
        "error": {
            "message": "No Record found",
            "detail": "Record doesn't exist or ACL restricts the record retrieval",
        },
        "status": "failure",
    }


def test_salesforce_query_follows_next_records_url(salesforce, run_tool):
    soql = "SELECT Id, Name FROM Account ORDER BY Name"
    first = run_tool("salesforce_query", {"query": {"q": soql}})
    assert first.status == "completed", first.error
    body = first.output["body"]
    assert (body["totalSize"], body["done"], len(body["records"])) == (3, False, 2)
    sent = salesforce.state.requests[-1]
    assert (sent["path"], sent["query"]) == ("/services/data/v62.0/query", {"q": soql})
    assert sent["headers"]["authorization"] == f"Bearer {BEARER}"
    locator = body["nextRecordsUrl"].rsplit("/", 1)[1]
    rest = run_tool("salesforce_query_more", {"path": {"queryLocator": locator}})
    assert rest.status == "completed", rest.error
    assert rest.output["body"]["done"] is True
    assert [r["Name"] for r in rest.output["body"]["records"]] == ["Acme 3"]
    assert salesforce.state.requests[-1]["path"] == body["nextRecordsUrl"]


def test_salesforce_get_and_create_a_record(salesforce, run_tool):
    run = run_tool(
        "salesforce_get_record",
        {"path": {"sObject": "Account", "id": "001A2"}, "query": {"fields": ["Name", "Id"]}},
    )
    assert run.status == "completed", run.error
    assert run.output["body"]["Name"] == "Acme 2"
    assert salesforce.state.requests[-1]["raw_query"] == "fields=Name%2CId"

    created = run_tool(
        "salesforce_create_record",
        {"path": {"sObject": "Account"}, "body": {"Name": "Initech", "Industry": "Software"}},
    )
    assert created.status == "completed", created.error
    assert created.output["status"] == 201
    assert created.output["body"] == {"id": "001A9", "success": True, "errors": []}
    sent = salesforce.state.requests[-1]
    assert (sent["method"], sent["path"]) == ("POST", "/services/data/v62.0/sobjects/Account")


def test_salesforce_errors_are_its_list_of_error_codes(salesforce, run_tool):
    bad = run_tool("salesforce_query", {"query": {"q": "SELECT Id"}})
    assert bad.status == "failed"
    assert bad.output["body"][0]["errorCode"] == "MALFORMED_QUERY"
    field = run_tool(
        "salesforce_create_record", {"path": {"sObject": "Account"}, "body": {"Colour": "red"}}
    )
    assert field.status == "failed" and "INVALID_FIELD" in field.error
    missing = run_tool("salesforce_get_record", {"path": {"sObject": "Account", "id": "001Z"}})
    assert missing.output["body"] == [
        {"message": "The requested resource does not exist", "errorCode": "NOT_FOUND"}
    ]


def test_an_expired_salesforce_token_is_a_clear_tool_error(connect, run_tool):
    connect("salesforce", salesforce_app(), auth="access_token", credentials={"token": "old"})
    run = run_tool("salesforce_query", {"query": {"q": "SELECT Id FROM Account"}})
    assert run.status == "failed"
    assert "HTTP 401" in run.error and "INVALID_SESSION_ID" in run.error
