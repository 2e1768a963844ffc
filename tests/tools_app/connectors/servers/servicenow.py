"""ServiceNow's Table API, as the connectors use them (see servers/__init__.py)."""

from __future__ import annotations

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from tests.tools_app.connectors.servers.common import (
    SN_PASSWORD,
    SN_USER,
    app_recording,
    basic_ok,
    record,
)


# --- ServiceNow Table API ---------------------------------------------------------------
def servicenow_app() -> Starlette:
    incidents = [
        {
            "sys_id": f"{n:032x}",
            "number": f"INC00100{n:02d}",
            "short_description": f"VPN down {n}",
            "state": "1",
            "priority": "2" if n % 2 else "1",
            "active": "true",
        }
        for n in range(1, 8)
    ]

    def error(status: int, message: str, detail: str | None) -> JSONResponse:
        return JSONResponse(
            {"error": {"message": message, "detail": detail}, "status": "failure"},
            status_code=status,
        )

    def denied(request: Request) -> JSONResponse | None:
        if not basic_ok(request, SN_USER, SN_PASSWORD):
            return error(401, "User Not Authenticated", "Required to provide Auth information")
        return None

    async def table(request: Request) -> Response:
        await record(request)
        if response := denied(request):
            return response
        query = request.query_params.get("sysparm_query", "")
        # The one condition the tests use: priority=<n> (conditions are joined by ^).
        wanted = [c.split("=", 1)[1] for c in query.split("^") if c.startswith("priority=")]
        rows = [i for i in incidents if not wanted or i["priority"] in wanted]
        limit = int(request.query_params.get("sysparm_limit", 10000))
        offset = int(request.query_params.get("sysparm_offset", 0))
        fields = request.query_params.get("sysparm_fields")
        page = [
            {k: v for k, v in r.items() if not fields or k in fields.split(",")}
            for r in rows[offset : offset + limit]
        ]
        base = f"{str(request.base_url).rstrip('/')}/api/now/table/incident?sysparm_limit={limit}"
        links = [f'<{base}&sysparm_offset=0>;rel="first"']
        if offset + limit < len(rows):
            links.append(f'<{base}&sysparm_offset={offset + limit}>;rel="next"')
        return JSONResponse(
            {"result": page}, headers={"X-Total-Count": str(len(rows)), "Link": ",".join(links)}
        )

    async def one(request: Request) -> Response:
        await record(request)
        if response := denied(request):
            return response
        row = next((i for i in incidents if i["sys_id"] == request.path_params["sys_id"]), None)
        if row is None:
            return error(
                404, "No Record found", "Record doesn't exist or ACL restricts the record retrieval"
            )
        return JSONResponse({"result": row})

    async def create(request: Request) -> Response:
        entry = await record(request)
        if response := denied(request):
            return response
        row = {"sys_id": "a" * 32, "number": "INC0010099", "state": "1", **entry["json"]}
        incidents.append(row)
        return JSONResponse({"result": row}, status_code=201)

    return app_recording(
        [
            Route("/api/now/table/incident", table, methods=["GET"]),
            Route("/api/now/table/incident", create, methods=["POST"]),
            Route("/api/now/table/incident/{sys_id}", one),
        ]
    )
