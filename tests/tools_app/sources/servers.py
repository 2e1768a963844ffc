"""Real servers for the sources tests, on 127.0.0.1 and a free port, each in a thread
of the test process (uvicorn), stopped when the test ends."""

from __future__ import annotations

import asyncio
import base64
import json
import threading
from collections.abc import Iterator
from contextlib import contextmanager

import httpx
import uvicorn
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, PlainTextResponse, RedirectResponse, Response
from starlette.routing import Route

from tests.conftest import free_port, wait_for_port

API_KEY = "pets-secret-key"


def http_get(*args, **kwargs):
    # The first request to a fresh studio server may wait for the SDK imports (seconds on a
    # busy machine): a generous bound, not a timing assertion.
    return httpx.get(*args, timeout=60, **kwargs)


def http_post(*args, **kwargs):
    return httpx.post(*args, timeout=60, **kwargs)


@contextmanager
def serve(app, *, timeout: float = 20.0) -> Iterator[str]:
    """Run an ASGI app with uvicorn in a thread; yields its base URL."""
    port = free_port()
    config = uvicorn.Config(
        app,
        host="127.0.0.1",
        port=port,
        log_level="warning",
        lifespan="auto",
        timeout_graceful_shutdown=2,
    )
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    try:
        wait_for_port(port, timeout=timeout)
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        thread.join(timeout=10)


# --- the Pets API, described by an OpenAPI spec it serves itself ---------------------------
PETS = {
    "1": {"id": "1", "name": "Rex", "kind": "dog", "tags": ["good", "old"]},
    "2": {"id": "2", "name": "Tom", "kind": "cat", "tags": ["grumpy"]},
}


def pets_spec(base: str = "/api") -> dict:
    return {
        "openapi": "3.0.3",
        "info": {"title": "Pets API", "version": "1.0"},
        "servers": [{"url": base}],
        "components": {
            "securitySchemes": {
                "key": {"type": "apiKey", "in": "header", "name": "X-API-Key"},
                "basic": {"type": "http", "scheme": "basic"},
            },
            "schemas": {
                "Pet": {
                    "type": "object",
                    "required": ["id", "name"],
                    "properties": {
                        "id": {"type": "string"},
                        "name": {"type": "string"},
                        "kind": {"type": "string", "enum": ["dog", "cat"]},
                        "tags": {"type": "array", "items": {"type": "string"}},
                        "owner": {"$ref": "#/components/schemas/Owner"},
                    },
                },
                "Owner": {
                    "type": "object",
                    "properties": {
                        "name": {"type": "string"},
                        "address": {
                            "type": "object",
                            "properties": {"city": {"type": "string"}, "zip": {"type": "string"}},
                        },
                    },
                },
                "NewPet": {
                    "type": "object",
                    "required": ["name", "kind"],
                    "properties": {
                        "name": {"type": "string"},
                        "kind": {"type": "string", "enum": ["dog", "cat"]},
                        "tags": {"type": "array", "items": {"type": "string"}},
                        "owner": {"$ref": "#/components/schemas/Owner"},
                    },
                },
            },
        },
        "security": [{"key": []}],
        "paths": {
            "/pets": {
                "get": {
                    "operationId": "listPets",
                    "summary": "List pets",
                    "description": "Pets with all the given tags.",
                    "parameters": [
                        {
                            "name": "tags",
                            "in": "query",
                            "schema": {"type": "array", "items": {"type": "string"}},
                        },
                        {"name": "limit", "in": "query", "schema": {"type": "integer"}},
                    ],
                    "responses": {
                        "200": {
                            "description": "ok",
                            "content": {
                                "application/json": {
                                    "schema": {
                                        "type": "array",
                                        "items": {"$ref": "#/components/schemas/Pet"},
                                    }
                                }
                            },
                        }
                    },
                },
                "post": {
                    "operationId": "createPet",
                    "summary": "Add a pet",
                    "requestBody": {
                        "required": True,
                        "content": {
                            "application/json": {"schema": {"$ref": "#/components/schemas/NewPet"}}
                        },
                    },
                    "responses": {
                        "201": {
                            "description": "made",
                            "content": {
                                "application/json": {"schema": {"$ref": "#/components/schemas/Pet"}}
                            },
                        }
                    },
                },
            },
            "/pets/{petId}": {
                "parameters": [
                    {"name": "petId", "in": "path", "required": True, "schema": {"type": "string"}}
                ],
                "get": {
                    "operationId": "getPet",
                    "summary": "One pet",
                    "responses": {
                        "200": {
                            "description": "ok",
                            "content": {
                                "application/json": {"schema": {"$ref": "#/components/schemas/Pet"}}
                            },
                        },
                        "404": {"description": "no such pet"},
                    },
                },
            },
            "/search": {
                "get": {
                    "operationId": "search",
                    "summary": "Echo of the raw query string",
                    "security": [],
                    "parameters": [
                        {
                            "name": "ids",
                            "in": "query",
                            "explode": False,
                            "schema": {"type": "array", "items": {"type": "integer"}},
                        },
                        {
                            "name": "words",
                            "in": "query",
                            "style": "pipeDelimited",
                            "explode": False,
                            "schema": {"type": "array", "items": {"type": "string"}},
                        },
                        {
                            "name": "filter",
                            "in": "query",
                            "style": "deepObject",
                            "explode": True,
                            "schema": {
                                "type": "object",
                                "properties": {"color": {"type": "string"}},
                            },
                        },
                        {"name": "X-Trace", "in": "header", "schema": {"type": "string"}},
                    ],
                    "responses": {"200": {"description": "ok"}},
                }
            },
            "/whoami": {
                "get": {
                    "operationId": "whoAmI",
                    "security": [{"basic": []}],
                    "responses": {"200": {"description": "ok"}},
                }
            },
            "/boom": {
                "get": {
                    "operationId": "boom",
                    "security": [],
                    "responses": {"200": {"description": "never"}},
                }
            },
            "/slow": {
                "get": {
                    "operationId": "slow",
                    "security": [],
                    "responses": {"200": {"description": "late"}},
                }
            },
            "/moved": {
                "get": {
                    "operationId": "moved",
                    "security": [],
                    "responses": {"200": {"description": "ok"}},
                }
            },
        },
    }


def _authorized(request: Request) -> bool:
    return request.headers.get("x-api-key") == API_KEY


async def list_pets(request: Request) -> Response:
    if not _authorized(request):
        return JSONResponse({"error": "missing or wrong API key"}, status_code=401)
    tags = request.query_params.getlist("tags")
    pets = [p for p in PETS.values() if all(t in p["tags"] for t in tags)]
    return JSONResponse(pets)


async def create_pet(request: Request) -> Response:
    if not _authorized(request):
        return JSONResponse({"error": "missing or wrong API key"}, status_code=401)
    body = await request.json()
    return JSONResponse({"id": "3", **body}, status_code=201)


async def get_pet(request: Request) -> Response:
    if not _authorized(request):
        return JSONResponse({"error": "missing or wrong API key"}, status_code=401)
    pet = PETS.get(request.path_params["pet_id"])
    if pet is None:
        return JSONResponse({"error": f"no pet {request.path_params['pet_id']}"}, status_code=404)
    return JSONResponse(pet)


async def search(request: Request) -> Response:
    return JSONResponse(
        {
            "query": request.url.query,
            "path": request.scope["raw_path"].decode(),
            "trace": request.headers.get("x-trace"),
        }
    )


async def whoami(request: Request) -> Response:
    auth = request.headers.get("authorization", "")
    if not auth.startswith("Basic "):
        return JSONResponse({"error": "basic auth required"}, status_code=401)
    user, _, _ = base64.b64decode(auth[6:]).decode().partition(":")
    return JSONResponse({"user": user})


async def boom(request: Request) -> Response:
    return PlainTextResponse("database on fire", status_code=500)


async def slow(request: Request) -> Response:
    await asyncio.sleep(5)
    return JSONResponse({"late": True})


async def moved(request: Request) -> Response:
    return RedirectResponse("/api/search", status_code=302)


async def spec(request: Request) -> Response:
    return Response(json.dumps(pets_spec()), media_type="application/json")


async def not_mcp(request: Request) -> Response:
    """Answers anything with JSON that is not JSON-RPC: a protocol error for a client."""
    return JSONResponse({"hello": "world"})


def pets_app() -> Starlette:
    return Starlette(
        routes=[
            Route("/openapi.json", spec),
            Route("/api/pets", list_pets, methods=["GET"]),
            Route("/api/pets", create_pet, methods=["POST"]),
            Route("/api/pets/{pet_id:path}", get_pet),
            Route("/api/search", search),
            Route("/api/whoami", whoami),
            Route("/api/boom", boom),
            Route("/api/slow", slow),
            Route("/api/moved", moved),
            Route("/api/not-mcp", not_mcp, methods=["GET", "POST", "DELETE"]),
        ]
    )


# --- an MCP server built with the official SDK ----------------------------------------------
MCP_TOKEN = "mcp-header-secret"


def mcp_test_server():
    from mcp.server.mcpserver import MCPServer

    server = MCPServer("test-tools")

    @server.tool(description="Add two integers.")
    def add(a: int, b: int) -> int:
        return a + b

    @server.tool(description="Repeat a word, as a list.")
    def repeat(word: str, times: int = 2) -> list[str]:
        return [word] * times

    @server.tool(description="Always fails.")
    def explode(reason: str) -> str:
        from mcp.server.mcpserver.exceptions import ToolError

        raise ToolError(f"exploded: {reason}")

    @server.tool(description="Takes its time.")
    async def dawdle(seconds: float) -> str:
        await asyncio.sleep(seconds)
        return "done"

    return server


class RequireHeader:
    """ASGI middleware: 401 unless the request carries the expected header."""

    def __init__(self, app, header: bytes, value: bytes) -> None:
        self.app, self.header, self.value = app, header, value

    async def __call__(self, scope, receive, send):
        if scope["type"] == "http" and dict(scope["headers"]).get(self.header) != self.value:
            response = JSONResponse({"error": "unauthorized"}, status_code=401)
            return await response(scope, receive, send)
        return await self.app(scope, receive, send)


def mcp_http_app():
    """Streamable HTTP at /mcp, requiring `X-Token: MCP_TOKEN`."""
    app = mcp_test_server().streamable_http_app(json_response=True)
    return RequireHeader(app, b"x-token", MCP_TOKEN.encode())


def mcp_sse_app():
    """The older SSE transport at /sse (+ /messages/)."""
    return mcp_test_server().sse_app()


# --- an A2A agent built with a2a-sdk ---------------------------------------------------------
A2A_TOKEN = "a2a-bearer-secret"


def a2a_agent_app(*, base_url: str, require_token: bool = True):
    """An echo agent that works through task states: submitted -> working -> completed
    (failed for a message containing "fail", input-required for "which", slow for "slow";
    a message containing "direct" is answered at once with a message, no task)."""
    from a2a.helpers import (
        get_message_text,
        new_task_from_user_message,
        new_text_message,
        new_text_part,
    )
    from a2a.server.agent_execution import AgentExecutor
    from a2a.server.request_handlers import DefaultRequestHandler
    from a2a.server.routes import create_agent_card_routes, create_jsonrpc_routes
    from a2a.server.tasks import InMemoryTaskStore, TaskUpdater
    from a2a.types.a2a_pb2 import (
        AgentCapabilities,
        AgentCard,
        AgentInterface,
        AgentSkill,
        TaskState,
    )

    class EchoExecutor(AgentExecutor):
        async def execute(self, context, event_queue) -> None:
            text = get_message_text(context.message)
            if "direct" in text:  # an immediate answer: a message, no task
                await event_queue.enqueue_event(new_text_message(f"Directly: {text}"))
                return
            task = context.current_task or new_task_from_user_message(context.message)
            await event_queue.enqueue_event(task)
            updater = TaskUpdater(event_queue, task.id, task.context_id)
            await updater.update_status(
                TaskState.TASK_STATE_WORKING,
                new_text_message("thinking", task_id=task.id, context_id=task.context_id),
            )
            await asyncio.sleep(5 if "slow" in text else 0.3)
            if "which" in text:
                await updater.requires_input(
                    new_text_message(
                        "Which one do you mean?", task_id=task.id, context_id=task.context_id
                    )
                )
                return
            if "fail" in text:
                await updater.failed(
                    new_text_message(
                        "I cannot do that", task_id=task.id, context_id=task.context_id
                    )
                )
                return
            await updater.add_artifact([new_text_part(f"You said: {text}")], name="reply")
            await updater.complete()

        async def cancel(self, context, event_queue) -> None:
            raise NotImplementedError

    card = AgentCard(
        name="Echo Agent",
        description="Repeats what it is told.",
        version="1.0.0",
        supported_interfaces=[
            AgentInterface(url=f"{base_url}/", protocol_binding="JSONRPC", protocol_version="1.0")
        ],
        capabilities=AgentCapabilities(streaming=False),
        default_input_modes=["text/plain"],
        default_output_modes=["text/plain"],
        skills=[AgentSkill(id="echo", name="Echo", description="Echoes", tags=["echo"])],
    )
    handler = DefaultRequestHandler(
        agent_executor=EchoExecutor(), task_store=InMemoryTaskStore(), agent_card=card
    )
    app = Starlette(
        routes=[*create_agent_card_routes(card), *create_jsonrpc_routes(handler, rpc_url="/")]
    )
    if require_token:
        return RequireHeader(app, b"authorization", f"Bearer {A2A_TOKEN}".encode())
    return app


@contextmanager
def serve_a2a_agent(**kwargs) -> Iterator[str]:
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    config = uvicorn.Config(
        a2a_agent_app(base_url=base, **kwargs),
        host="127.0.0.1",
        port=port,
        log_level="warning",
        timeout_graceful_shutdown=2,
    )
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    try:
        wait_for_port(port, timeout=20)
        yield base
    finally:
        server.should_exit = True
        thread.join(timeout=10)
