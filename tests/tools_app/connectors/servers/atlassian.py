"""Jira Cloud and Confluence Cloud, as the connectors use them (see servers/__init__.py)."""

from __future__ import annotations

from typing import Any

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from tests.tools_app.connectors.servers.common import (
    API_TOKEN,
    EMAIL,
    app_recording,
    basic_ok,
    record,
)


# --- Jira Cloud ------------------------------------------------------------------------
def _jira_error(status: int, messages: list[str], errors: dict | None = None) -> JSONResponse:
    return JSONResponse({"errorMessages": messages, "errors": errors or {}}, status_code=status)


def jira_app() -> Starlette:
    issues = {
        f"DEV-{n}": {
            "id": str(10000 + n),
            "key": f"DEV-{n}",
            "fields": {"summary": f"Issue {n}", "status": {"name": "To Do"}, "labels": []},
        }
        for n in range(1, 6)
    }
    comments = {
        "DEV-1": [
            {"id": str(c), "body": {"type": "doc", "version": 1, "content": []}} for c in range(7)
        ]
    }

    def guard(request: Request) -> JSONResponse | None:
        if not basic_ok(request, EMAIL, API_TOKEN):
            return _jira_error(
                401,
                ["You are not authenticated. Authentication required to perform this operation."],
            )
        return None

    def shaped(request: Request, issue: dict, *, all_fields: bool = False) -> dict:
        """The issue with the fields asked for (search: id and key only by default)."""
        fields = request.query_params.get("fields")
        base = str(request.base_url).rstrip("/")
        out = {
            "id": issue["id"],
            "key": issue["key"],
            "self": f"{base}/rest/api/3/issue/{issue['id']}",
        }
        if fields:
            out["fields"] = {k: v for k, v in issue["fields"].items() if k in fields.split(",")}
        elif all_fields:
            out["fields"] = issue["fields"]
        return out

    async def search(request: Request) -> Response:
        await record(request)
        if denied := guard(request):
            return denied
        jql = request.query_params.get("jql", "")
        if "badfield" in jql:
            return _jira_error(
                400, ["Field 'badfield' does not exist or you do not have permission to view it."]
            )
        if not jql:
            return _jira_error(
                400,
                [
                    "Unbounded JQL queries are not allowed here. "
                    "Please add a search restriction to your query."
                ],
            )
        start = int(request.query_params.get("nextPageToken") or 0)
        size = int(request.query_params.get("maxResults", 50))
        page = list(issues.values())[start : start + size]
        body: dict[str, Any] = {"issues": [shaped(request, i) for i in page]}
        if start + size < len(issues):
            body["nextPageToken"] = str(start + size)
            body["isLast"] = False
        else:
            # As documented: a null token on the last page (some sites leave it out).
            body["nextPageToken"] = None
            body["isLast"] = True
        return JSONResponse(body)

    async def issue_get(request: Request) -> Response:
        await record(request)
        if denied := guard(request):
            return denied
        issue = issues.get(request.path_params["key"])
        if issue is None:
            return _jira_error(
                404, ["Issue does not exist or you do not have permission to see it."]
            )
        return JSONResponse(shaped(request, issue, all_fields=True))

    async def issue_create(request: Request) -> Response:
        entry = await record(request)
        if denied := guard(request):
            return denied
        fields = (entry["json"] or {}).get("fields", {})
        if not fields.get("summary"):
            return _jira_error(400, [], {"summary": "You must specify a summary of the issue."})
        key = f"{fields['project']['key']}-{len(issues) + 1}"
        issues[key] = {
            "id": str(10000 + len(issues) + 1),
            "key": key,
            "fields": {"summary": fields["summary"]},
        }
        base = str(request.base_url).rstrip("/")
        return JSONResponse(
            {
                "id": issues[key]["id"],
                "key": key,
                "self": f"{base}/rest/api/3/issue/{issues[key]['id']}",
            },
            status_code=201,
        )

    async def comments_list(request: Request) -> Response:
        await record(request)
        if denied := guard(request):
            return denied
        key = request.path_params["key"]
        if key not in issues:
            return _jira_error(
                404, ["Issue does not exist or you do not have permission to see it."]
            )
        start = int(request.query_params.get("startAt", 0))
        size = int(request.query_params.get("maxResults", 5000))
        all_comments = comments.get(key, [])
        return JSONResponse(
            {
                "startAt": start,
                "maxResults": size,
                "total": len(all_comments),
                "comments": all_comments[start : start + size],
            }
        )

    async def comment_add(request: Request) -> Response:
        entry = await record(request)
        if denied := guard(request):
            return denied
        key = request.path_params["key"]
        if key not in issues:
            return _jira_error(
                404, ["Issue does not exist or you do not have permission to see it."]
            )
        comment = {
            "id": "20001",
            "author": {"accountId": "5b10a", "displayName": "Ann"},
            "body": entry["json"]["body"],
            "created": "2026-12-04T10:00:00.000+0000",
        }
        comments.setdefault(key, []).append(comment)
        return JSONResponse(comment, status_code=201)

    return app_recording(
        [
            Route("/rest/api/3/search/jql", search),
            Route("/rest/api/3/issue", issue_create, methods=["POST"]),
            Route("/rest/api/3/issue/{key}", issue_get),
            Route("/rest/api/3/issue/{key}/comment", comments_list, methods=["GET"]),
            Route("/rest/api/3/issue/{key}/comment", comment_add, methods=["POST"]),
        ]
    )


# --- Confluence Cloud ------------------------------------------------------------------
def confluence_app() -> Starlette:
    pages = {
        str(n): {
            "id": str(n),
            "status": "current",
            "title": f"Runbook {n}",
            "spaceId": "98306",
            "body": {"storage": {"representation": "storage", "value": f"<p>Step {n}</p>"}},
        }
        for n in range(101, 104)
    }
    spaces = [
        {"id": "98306", "key": "OPS", "name": "Operations", "type": "global", "status": "current"},
        {"id": "98307", "key": "DEV", "name": "Development", "type": "global", "status": "current"},
    ]

    def v2_error(status: int, code: str, title: str) -> JSONResponse:
        return JSONResponse(
            {"errors": [{"status": status, "code": code, "title": title, "detail": None}]},
            status_code=status,
        )

    async def search(request: Request) -> Response:
        await record(request)
        if not basic_ok(request, EMAIL, API_TOKEN):
            return JSONResponse(
                {"statusCode": 401, "data": {"authorized": False}, "message": "Unauthorized"},
                status_code=401,
            )
        cql = request.query_params.get("cql", "")
        if "~" not in cql and "=" not in cql:
            return JSONResponse(
                {
                    "statusCode": 400,
                    "data": {"authorized": True, "valid": False, "errors": [], "successful": False},
                    "message": f"Could not parse cql : {cql}",
                },
                status_code=400,
            )
        start, limit = (
            int(request.query_params.get("start", 0)),
            int(request.query_params.get("limit", 25)),
        )
        matches = list(pages.values())
        results = [
            {
                "content": {
                    "id": p["id"],
                    "type": "page",
                    "status": "current",
                    "title": p["title"],
                },
                "title": p["title"],
                "excerpt": "…",
                "url": f"/spaces/OPS/pages/{p['id']}",
                "entityType": "content",
            }
            for p in matches[start : start + limit]
        ]
        links: dict[str, str] = {"base": str(request.base_url).rstrip("/") + "/wiki"}
        if start + limit < len(matches):
            links["next"] = (
                f"/rest/api/search?next=true&cursor=c{start + limit}"
                f"&limit={limit}&start={start + limit}&cql={cql}"
            )
        return JSONResponse(
            {
                "results": results,
                "start": start,
                "limit": limit,
                "size": len(results),
                "totalSize": len(matches),
                "cqlQuery": cql,
                "_links": links,
            }
        )

    async def page_get(request: Request) -> Response:
        await record(request)
        if not basic_ok(request, EMAIL, API_TOKEN):
            return v2_error(401, "UNAUTHORIZED", "Unauthorized")
        page = pages.get(request.path_params["id"])
        if page is None:
            return v2_error(404, "NOT_FOUND", "Not Found")
        out = {k: v for k, v in page.items() if k != "body"}
        if request.query_params.get("body-format") == "storage":
            out["body"] = page["body"]
        return JSONResponse(out)

    async def page_create(request: Request) -> Response:
        entry = await record(request)
        if not basic_ok(request, EMAIL, API_TOKEN):
            return v2_error(401, "UNAUTHORIZED", "Unauthorized")
        body = entry["json"]
        if body["spaceId"] not in {s["id"] for s in spaces}:
            return v2_error(
                400,
                "INVALID_REQUEST_PARAMETER",
                f"Provided value {{{body['spaceId']}}} for 'spaceId' is not the correct type. "
                "Expected type is ContentId",
            )
        page = {
            "id": "104",
            "status": body.get("status", "current"),
            "title": body["title"],
            "spaceId": body["spaceId"],
            "version": {"number": 1},
            "_links": {"webui": "/spaces/OPS/pages/104"},
        }
        pages["104"] = page
        return JSONResponse(page)

    async def spaces_list(request: Request) -> Response:
        await record(request)
        keys = request.query_params.get("keys")
        chosen = [s for s in spaces if not keys or s["key"] in keys.split(",")]
        return JSONResponse({"results": chosen, "_links": {}})

    return app_recording(
        [
            Route("/wiki/rest/api/search", search),
            Route("/wiki/api/v2/pages/{id}", page_get),
            Route("/wiki/api/v2/pages", page_create, methods=["POST"]),
            Route("/wiki/api/v2/spaces", spaces_list),
        ]
    )
