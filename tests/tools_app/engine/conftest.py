"""Fixtures of the tool-engine tests: tool rows, code tools registered for one test, and
real HTTP servers and TCP listeners on 127.0.0.1 (bounded in time, stopped after)."""

from __future__ import annotations

import json
import socket
import threading
import time
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest

from agents_core.definitions import ToolDefinition
from agents_core.models import Source
from agents_core.registry import get_registry
from tools_app.models import Tool


@pytest.fixture
def make_tool(db) -> Callable[..., Tool]:
    """A studio tool row: make_tool(kind="python", config={...}, owner=owner, ...)."""
    counter = iter(range(1, 10_000))

    def make(**fields: Any) -> Tool:
        fields.setdefault("name", f"engine_tool_{next(counter)}")
        fields.setdefault("input_schema", {"type": "object"})
        fields.setdefault("source", Source.STUDIO)
        return Tool.objects.create(**fields)

    return make


@pytest.fixture
def python_tool(make_tool, owner) -> Callable[..., Tool]:
    """A Python code tool: python_tool(code, owner=..., timeout_seconds=...)."""

    def make(code: str, **fields: Any) -> Tool:
        fields.setdefault("timeout_seconds", 10)
        fields.setdefault("owner", owner)
        return make_tool(kind="python", config={"code": code}, **fields)

    return make


def synced_row(definition: ToolDefinition) -> Tool:
    """The row the registry sync gives a code definition (the test database may have
    been flushed by a transactional test, taking the rows migrate created with it)."""
    tool, _ = Tool.objects.update_or_create(
        name=definition.id,
        defaults={
            "kind": definition.kind,
            "description": definition.description,
            "input_schema": definition.input_schema,
            "output_schema": definition.output_schema,
            "timeout_seconds": definition.timeout,
            "execution_mode": definition.execution_mode,
            "source": Source.CODE,
            "owner": None,
        },
    )
    return tool


@pytest.fixture
def code_tool(db) -> Iterator[Callable[[ToolDefinition], Tool]]:
    """Register a code definition for one test and give it its synced row."""
    registry = get_registry()
    added: list[str] = []

    def add(definition: ToolDefinition) -> Tool:
        registry.tools[definition.id] = definition
        added.append(definition.id)
        return synced_row(definition)

    yield add
    for name in added:
        registry.tools.pop(name, None)


@pytest.fixture
def system_tool(db) -> Callable[[str], Tool]:
    """The synced row of a built-in system tool."""
    return lambda name: synced_row(get_registry().tools[name])


class LocalServer:
    """A real HTTP server on 127.0.0.1 whose routes the test sets; records requests."""

    def __init__(self) -> None:
        self.routes: dict[str, Callable[[dict[str, Any]], tuple[int, dict[str, str], bytes]]] = {}
        self.requests: list[dict[str, Any]] = []
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def _handle(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                request = {
                    "method": self.command,
                    "path": self.path,
                    "headers": {k.lower(): v for k, v in self.headers.items()},
                    "body": self.rfile.read(length) if length else b"",
                }
                server.requests.append(request)
                route = server.routes.get(self.path.split("?")[0])
                status, headers, body = route(request) if route else (404, {}, b"no route")
                self.send_response(status)
                for name, value in headers.items():
                    self.send_header(name, value)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            do_GET = do_POST = do_PUT = do_PATCH = do_DELETE = _handle  # noqa: N815

            def log_message(self, *args: Any) -> None:
                pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.port = self.httpd.server_address[1]
        self.url = f"http://127.0.0.1:{self.port}"
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)
        self.thread.start()

    def route(self, path: str, status: int = 200, body: Any = b"", **headers: str) -> None:
        if isinstance(body, (dict, list)):
            body = json.dumps(body).encode()
            headers.setdefault("Content_Type", "application/json")
        elif isinstance(body, str):
            body = body.encode()
            headers.setdefault("Content_Type", "text/plain; charset=utf-8")
        fixed = {k.replace("_", "-"): v for k, v in headers.items()}
        self.routes[path] = lambda request: (status, fixed, body)

    def stop(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


@pytest.fixture
def local_server() -> Iterator[LocalServer]:
    server = LocalServer()
    yield server
    server.stop()


class Listener:
    """A bare TCP listener on 127.0.0.1 that only counts the connections it receives."""

    def __init__(self) -> None:
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(16)
        self.sock.setblocking(False)
        self.port = self.sock.getsockname()[1]

    def connections(self, wait: float = 0.2) -> int:
        """Connections accepted so far (after a short settle for in-flight SYNs)."""
        time.sleep(wait)
        count = 0
        while True:
            try:
                conn, _ = self.sock.accept()
            except BlockingIOError:
                return count
            conn.close()
            count += 1


@pytest.fixture
def listener() -> Iterator[Listener]:
    probe = Listener()
    yield probe
    probe.sock.close()
