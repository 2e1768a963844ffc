"""Salesforce's REST API, as the connectors use them (see servers/__init__.py)."""

from __future__ import annotations

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from tests.tools_app.connectors.servers.common import (
    app_recording,
    bearer_ok,
    record,
)


# --- Salesforce REST API ----------------------------------------------------------------
def salesforce_app() -> Starlette:
    accounts = [
        {
            "attributes": {
                "type": "Account",
                "url": f"/services/data/v62.0/sobjects/Account/001A{n}",
            },
            "Id": f"001A{n}",
            "Name": f"Acme {n}",
        }
        for n in range(1, 4)
    ]
    batch = 2

    def errors(status: int, code: str, message: str) -> JSONResponse:
        return JSONResponse([{"message": message, "errorCode": code}], status_code=status)

    def denied(request: Request) -> JSONResponse | None:
        if not bearer_ok(request):
            return errors(401, "INVALID_SESSION_ID", "Session expired or invalid")
        return None

    async def query(request: Request) -> Response:
        await record(request)
        if response := denied(request):
            return response
        soql = request.query_params.get("q", "")
        if " FROM " not in soql.upper():
            return errors(400, "MALFORMED_QUERY", f"unexpected token: '{soql}'")
        return JSONResponse(
            {
                "totalSize": len(accounts),
                "done": False,
                "records": accounts[:batch],
                "nextRecordsUrl": f"/services/data/v62.0/query/01gD0000002HU6KIAW-{batch}",
            }
        )

    async def query_more(request: Request) -> Response:
        await record(request)
        if response := denied(request):
            return response
        locator = request.path_params["locator"]
        if not locator.startswith("01gD0000002HU6KIAW-"):
            return errors(400, "INVALID_QUERY_LOCATOR", "invalid query locator")
        start = int(locator.rsplit("-", 1)[1])
        return JSONResponse({"totalSize": len(accounts), "done": True, "records": accounts[start:]})

    async def record_get(request: Request) -> Response:
        await record(request)
        if response := denied(request):
            return response
        row = next((a for a in accounts if a["Id"] == request.path_params["id"]), None)
        if row is None or request.path_params["sobject"] != "Account":
            return errors(404, "NOT_FOUND", "The requested resource does not exist")
        return JSONResponse(row)

    async def record_create(request: Request) -> Response:
        entry = await record(request)
        if response := denied(request):
            return response
        unknown = [k for k in entry["json"] if k not in ("Name", "Industry")]
        if unknown:
            return JSONResponse(
                [
                    {
                        "message": f"No such column '{unknown[0]}' on sobject of type Account",
                        "errorCode": "INVALID_FIELD",
                        "fields": [],
                    }
                ],
                status_code=400,
            )
        return JSONResponse({"id": "001A9", "success": True, "errors": []}, status_code=201)

    return app_recording(
        [
            Route("/services/data/v62.0/query", query),
            Route("/services/data/v62.0/query/{locator}", query_more),
            Route("/services/data/v62.0/sobjects/{sobject}/{id}", record_get),
            Route("/services/data/v62.0/sobjects/{sobject}", record_create, methods=["POST"]),
        ]
    )
