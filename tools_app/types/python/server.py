"""The sandbox service of docker-compose: `python -m tools_app.types.python.server
--host 0.0.0.0 --port 8700`. POST /run {"code", "input", "timeout"} runs the code with
tools_app.types.python.sandbox (same limits as a local run) and answers its result;
GET /health answers the isolation mode. Standard library only and no Django, so the
service needs neither the studio's settings nor its secrets. It must only be reachable
on the deployment's internal network (the web and worker services)."""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from tools_app.types.python.sandbox import detect_isolation, sandbox_run

MAX_REQUEST = 16 * 1024 * 1024
MAX_TIMEOUT = 600.0


class SandboxHandler(BaseHTTPRequestHandler):
    python = "/usr/bin/python3"

    def do_GET(self) -> None:  # noqa: N802
        if self.path != "/health":
            return self._send(HTTPStatus.NOT_FOUND, {"error": "not found"})
        return self._send(HTTPStatus.OK, {"ok": True, "isolation": detect_isolation(self.python)})

    def do_POST(self) -> None:  # noqa: N802
        if self.path != "/run":
            return self._send(HTTPStatus.NOT_FOUND, {"error": "not found"})
        length = int(self.headers.get("Content-Length") or 0)
        if not 0 < length <= MAX_REQUEST:
            return self._send(HTTPStatus.REQUEST_ENTITY_TOO_LARGE, {"error": "bad length"})
        try:
            body = json.loads(self.rfile.read(length))
            code, timeout = str(body["code"]), float(body.get("timeout", 30))
        except (ValueError, KeyError, TypeError) as exc:
            return self._send(HTTPStatus.BAD_REQUEST, {"error": f"bad request: {exc}"})
        timeout = min(max(timeout, 0.1), MAX_TIMEOUT)
        result = asyncio.run(
            sandbox_run(code, body.get("input"), timeout=timeout, python=self.python)
        )
        return self._send(HTTPStatus.OK, result)

    def _send(self, status: HTTPStatus, data: dict) -> None:
        payload = json.dumps(data).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(payload)))
        self.end_headers()
        self.wfile.write(payload)

    def log_message(self, format: str, *args: object) -> None:  # noqa: A002
        pass  # one line per run would drown the service's log


def default_python() -> str:
    # Images built FROM python:*-slim have no /usr/bin/python3; the service's own
    # interpreter is then the one to use (the container is the sandbox's outer wall).
    configured = os.environ.get("STUDIO_PYTHON_EXECUTABLE", "")
    if configured:
        return configured
    return "/usr/bin/python3" if os.path.exists("/usr/bin/python3") else sys.executable


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8700)
    parser.add_argument(
        "--python",
        default=default_python(),
        help="Interpreter for the code (default: $STUDIO_PYTHON_EXECUTABLE, "
        "else /usr/bin/python3, else this interpreter).",
    )
    args = parser.parse_args(argv)
    SandboxHandler.python = args.python
    server = ThreadingHTTPServer((args.host, args.port), SandboxHandler)
    print(
        f"sandbox on {args.host}:{args.port}, isolation {detect_isolation(args.python)}", flush=True
    )
    server.serve_forever()


if __name__ == "__main__":
    main()
