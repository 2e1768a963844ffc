"""Google Custom Search and Google Maps, as the connectors use them (see servers/__init__.py)."""

from __future__ import annotations

from typing import Any

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from tests.tools_app.connectors.servers.common import (
    CX,
    GOOGLE_KEY,
    app_recording,
    record,
)


# --- Google ------------------------------------------------------------------------------
def google_error(code: int, message: str, status: str, reason: str = "badRequest") -> JSONResponse:
    return JSONResponse(
        {
            "error": {
                "code": code,
                "message": message,
                "errors": [{"message": message, "domain": "global", "reason": reason}],
                "status": status,
            }
        },
        status_code=code,
    )


def google_search_app() -> Starlette:
    async def search(request: Request) -> Response:
        await record(request)
        params = request.query_params
        if params.get("key") != GOOGLE_KEY:
            return google_error(
                400, "API key not valid. Please pass a valid API key.", "INVALID_ARGUMENT"
            )
        if params.get("cx") != CX:
            return google_error(400, "Request contains an invalid argument.", "INVALID_ARGUMENT")
        start, num = int(params.get("start", 1)), int(params.get("num", 10))
        total = 25
        items = [
            {
                "kind": "customsearch#result",
                "title": f"Result {i}",
                "link": f"https://example.org/{i}",
                "displayLink": "example.org",
                "snippet": f"Snippet {i} about {params['q']}",
            }
            for i in range(start, min(start + num, total + 1))
        ]
        request_info = {
            "title": "Google Custom Search",
            "totalResults": str(total),
            "searchTerms": params["q"],
            "count": len(items),
            "startIndex": start,
        }
        queries: dict[str, Any] = {"request": [request_info]}
        if start + num <= total:
            queries["nextPage"] = [{**request_info, "startIndex": start + num}]
        return JSONResponse(
            {
                "kind": "customsearch#search",
                "queries": queries,
                "searchInformation": {"searchTime": 0.2, "totalResults": str(total)},
                "items": items,
            }
        )

    return app_recording([Route("/customsearch/v1", search)])


def google_maps_app() -> Starlette:
    places = [
        {
            "id": f"ChIJ{n}",
            "displayName": {"text": f"Cafe {n}", "languageCode": "en"},
            "formattedAddress": f"{n} Rue de Lyon, Paris",
            "location": {"latitude": 48.84, "longitude": 2.37},
        }
        for n in range(1, 6)
    ]

    async def geocode(request: Request) -> Response:
        await record(request)
        if request.query_params.get("key") != GOOGLE_KEY:
            return JSONResponse(
                {
                    "error_message": "The provided API key is invalid.",
                    "results": [],
                    "status": "REQUEST_DENIED",
                }
            )
        if request.query_params.get("address") == "nowhere":
            return JSONResponse({"results": [], "status": "ZERO_RESULTS"})
        return JSONResponse(
            {
                "results": [
                    {
                        "formatted_address": "Champ de Mars, 75007 Paris, France",
                        "place_id": "ChIJLU7jZClu5kcR4PcOOO6p3I0",
                        "geometry": {
                            "location": {"lat": 48.8583701, "lng": 2.2944813},
                            "location_type": "ROOFTOP",
                        },
                    }
                ],
                "status": "OK",
            }
        )

    def google_key_ok(request: Request) -> bool:
        return request.headers.get("x-goog-api-key") == GOOGLE_KEY

    async def search_text(request: Request) -> Response:
        entry = await record(request)
        if not google_key_ok(request):
            return google_error(
                403, "The caller does not have permission", "PERMISSION_DENIED", "forbidden"
            )
        if not request.headers.get("x-goog-fieldmask"):
            return google_error(
                400,
                "FieldMask is a required parameter. See "
                "https://cloud.google.com/apis/docs/system-parameters on how to provide it.",
                "INVALID_ARGUMENT",
            )
        size = entry["json"].get("pageSize", 20)
        start = int(entry["json"].get("pageToken") or 0)
        body: dict[str, Any] = {"places": places[start : start + size]}
        if start + size < len(places):
            body["nextPageToken"] = str(start + size)
        return JSONResponse(body)

    async def routes(request: Request) -> Response:
        await record(request)
        if not google_key_ok(request):
            return google_error(
                403, "The caller does not have permission", "PERMISSION_DENIED", "forbidden"
            )
        if not request.headers.get("x-goog-fieldmask"):
            return google_error(400, "FieldMask is a required parameter.", "INVALID_ARGUMENT")
        return JSONResponse(
            {
                "routes": [
                    {
                        "distanceMeters": 3712,
                        "duration": "2940s",
                        "polyline": {"encodedPolyline": "ezgiHmnfM"},
                    }
                ]
            }
        )

    return app_recording(
        [
            Route("/maps/api/geocode/json", geocode),
            Route("/v1/places:searchText", search_text, methods=["POST"]),
            Route("/directions/v2:computeRoutes", routes, methods=["POST"]),
        ]
    )
