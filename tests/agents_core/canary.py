"""A canary model server on 127.0.0.1: a real HTTP listener that records every connection
and every request with its Authorization header, and answers a chat completion the way an
OpenAI-compatible server streams one (so a call that is allowed to reach it completes)."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

CANARY_KEY = "sk-canary-server-key-0123456789"


class _Server(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self) -> None:
        super().__init__(("127.0.0.1", 0), _Handler)
        self.connections: list[tuple[str, int]] = []
        self.requests: list[dict] = []

    def process_request(self, request, client_address) -> None:  # noqa: ANN001
        self.connections.append(client_address)  # before a byte is read
        super().process_request(request, client_address)


class _Handler(BaseHTTPRequestHandler):
    server: _Server

    def do_POST(self) -> None:  # noqa: N802
        body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        self.server.requests.append(
            {
                "path": self.path,
                "authorization": self.headers.get("Authorization"),
                "body": json.loads(body or b"{}"),
            }
        )
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.end_headers()
        for delta, finish in (
            ({"role": "assistant", "content": "canary answer"}, None),
            ({}, "stop"),
        ):
            chunk = {
                "id": "chatcmpl-canary",
                "object": "chat.completion.chunk",
                "created": 1,
                "model": "canary",
                "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
            }
            self.wfile.write(f"data: {json.dumps(chunk)}\n\n".encode())
        self.wfile.write(b"data: [DONE]\n\n")

    def log_message(self, *args) -> None:  # noqa: ANN002
        pass


class Canary:
    def __init__(self, server: _Server) -> None:
        self._server = server
        self.port = server.server_address[1]
        self.origin = f"http://127.0.0.1:{self.port}"
        self.base = f"{self.origin}/v1"

    @property
    def connections(self) -> list[tuple[str, int]]:
        return list(self._server.connections)

    @property
    def requests(self) -> list[dict]:
        return list(self._server.requests)


@contextmanager
def canary_server() -> Iterator[Canary]:
    server = _Server()
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield Canary(server)
    finally:
        server.shutdown()
        server.server_close()
