"""Microsoft Graph, as the connectors use them (see servers/__init__.py)."""

from __future__ import annotations

from typing import Any

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from tests.tools_app.connectors.servers.common import (
    app_recording,
    bearer_ok,
    record,
)


# --- Microsoft Graph --------------------------------------------------------------------
def graph_app() -> Starlette:
    lists = [
        {"id": f"list-{n}", "displayName": f"List {n}", "list": {"template": "genericList"}}
        for n in range(5)
    ]

    def error(status: int, code: str, message: str) -> JSONResponse:
        inner = {"date": "2026-12-04T10:00:00", "request-id": "r-1", "client-request-id": "c-1"}
        return JSONResponse(
            {"error": {"code": code, "message": message, "innerError": inner}}, status_code=status
        )

    def denied(request: Request) -> JSONResponse | None:
        if not bearer_ok(request):
            return error(401, "InvalidAuthenticationToken", "Access token is empty.")
        return None

    async def search(request: Request) -> Response:
        entry = await record(request)
        if response := denied(request):
            return response
        query = entry["json"]["requests"][0]["query"]["queryString"]
        hit = {
            "hitId": "01ABC",
            "rank": 1,
            "summary": f"<c0>{query}</c0> Q3",
            "resource": {
                "@odata.type": "#microsoft.graph.driveItem",
                "id": "01ABC",
                "name": "Q3.pptx",
                "webUrl": "https://contoso.sharepoint.com/Q3.pptx",
                "parentReference": {"driveId": "b!drive"},
            },
        }
        return JSONResponse(
            {
                "value": [
                    {
                        "searchTerms": [query],
                        "hitsContainers": [
                            {"hits": [hit], "total": 1, "moreResultsAvailable": False}
                        ],
                    }
                ]
            }
        )

    async def item(request: Request) -> Response:
        await record(request)
        if response := denied(request):
            return response
        if request.path_params["item"] != "01ABC":
            return error(404, "itemNotFound", "The resource could not be found.")
        return JSONResponse(
            {
                "id": "01ABC",
                "name": "Q3.pptx",
                "size": 1024,
                "webUrl": "https://contoso.sharepoint.com/Q3.pptx",
                "file": {
                    "mimeType": "application/vnd.openxmlformats-officedocument."
                    "presentationml.presentation"
                },
            }
        )

    async def sites(request: Request) -> Response:
        await record(request)
        if response := denied(request):
            return response
        return JSONResponse(
            {
                "value": [
                    {
                        "id": "contoso.sharepoint.com,1,2",
                        "name": "Marketing",
                        "webUrl": "https://contoso.sharepoint.com/sites/mkt",
                    }
                ]
            }
        )

    async def site_lists(request: Request) -> Response:
        await record(request)
        if response := denied(request):
            return response
        top = int(request.query_params.get("$top", 100))
        skip = int(request.query_params.get("$skiptoken", 0))
        body: dict[str, Any] = {
            "@odata.context": "https://graph.microsoft.com/v1.0/$metadata#sites('x')/lists",
            "value": lists[skip : skip + top],
        }
        if skip + top < len(lists):
            base = str(request.base_url).rstrip("/")
            body["@odata.nextLink"] = (
                f"{base}/v1.0/sites/{request.path_params['site']}/lists"
                f"?$top={top}&$skiptoken={skip + top}"
            )
        return JSONResponse(body)

    return app_recording(
        [
            Route("/v1.0/search/query", search, methods=["POST"]),
            Route("/v1.0/drives/{drive}/items/{item}", item),
            Route("/v1.0/sites", sites),
            Route("/v1.0/sites/{site}/lists", site_lists),
        ]
    )
