"""The sandbox service of docker-compose: `python -m tools_app.types.python.server
--host 0.0.0.0 --port 8765`.

- POST /run {"code", "input", "timeout", "tenant", "limits"} runs the code with
  tools_app.types.python.sandbox under the limits the studio sends (its settings) and
  answers the result; 503 with {"refused": true, "error"} when this host cannot isolate
  runs and --allow-weak was not given.
- POST /status {"limits"} answers what a run gets here (the console's badge).
- GET /health answers the isolation mode and whether runs are refused.

How this host isolates runs (pool size, uid range, cgroups, mode) is the service's own
command line. It never configures Django nor reads the studio's settings, so the
service needs neither the studio's settings nor its secrets. It must only be reachable
on the deployment's internal network (the web and worker services).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from tools_app.types.python.cgroups import backend_detect
from tools_app.types.python.isolation import HostConfig, RunLimits, capabilities
from tools_app.types.python.sandbox import sandbox_run

MAX_REQUEST = 16 * 1024 * 1024
# Bounds on what a request may ask for: (type, lowest, highest).
LIMIT_RANGES: dict[str, tuple[type, float, float]] = {
    "memory_mb": (int, 16, 1 << 20),
    "pids": (int, 8, 1 << 16),
    "cpus": (float, 0, 1024),
    "tmp_mb": (int, 1, 1 << 20),
    "max_timeout": (float, 0.1, 86_400),
    "queue_wait": (float, 0, 86_400),
}


class BadRequest(ValueError):
    pass


def parse_limits(data: Any) -> RunLimits:
    if not isinstance(data, dict):
        raise BadRequest("limits: must be an object")
    values = {}
    for name, (kind, low, high) in LIMIT_RANGES.items():
        value = data.get(name)
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise BadRequest(f"limits.{name}: must be a number")
        if not low <= value <= high:
            raise BadRequest(f"limits.{name}: must be between {low!r} and {high!r}")
        values[name] = kind(value)
    return RunLimits(**values)


class SandboxHandler(BaseHTTPRequestHandler):
    host_config: HostConfig

    def do_GET(self) -> None:  # noqa: N802
        if self.path != "/health":
            return self._send(HTTPStatus.NOT_FOUND, {"error": "not found"})
        caps = capabilities(self.host_config)
        body = {"ok": not caps.refusal, "isolation": caps.mode, "strong": caps.strong}
        return self._send(HTTPStatus.OK, {**body, "refusal": caps.refusal})

    def do_POST(self) -> None:  # noqa: N802
        if self.path not in ("/run", "/status"):
            return self._send(HTTPStatus.NOT_FOUND, {"error": "not found"})
        length = int(self.headers.get("Content-Length") or 0)
        if not 0 < length <= MAX_REQUEST:
            return self._send(HTTPStatus.REQUEST_ENTITY_TOO_LARGE, {"error": "bad length"})
        try:
            body = json.loads(self.rfile.read(length))
            if not isinstance(body, dict):
                raise BadRequest("the body must be a JSON object")
            limits = parse_limits(body.get("limits"))
            if self.path == "/status":
                summary = capabilities(self.host_config).summary(limits)
                return self._send(HTTPStatus.OK, summary)
            code, timeout = body["code"], body.get("timeout", 30)
            if not isinstance(code, str) or isinstance(timeout, bool):
                raise BadRequest("code must be a string and timeout a number")
            timeout, tenant = float(timeout), str(body.get("tenant") or "")
        except (ValueError, KeyError, TypeError) as exc:
            return self._send(HTTPStatus.BAD_REQUEST, {"error": f"bad request: {exc}"})
        if not 0 < timeout:
            return self._send(HTTPStatus.BAD_REQUEST, {"error": "bad request: timeout"})
        result = asyncio.run(
            sandbox_run(
                code,
                body.get("input"),
                timeout=timeout,
                host=self.host_config,
                limits=limits,
                tenant=tenant,
            )
        )
        status = HTTPStatus.SERVICE_UNAVAILABLE if result.get("refused") else HTTPStatus.OK
        return self._send(status, result)

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
    # interpreter is then the one to use.
    return "/usr/bin/python3" if os.path.exists("/usr/bin/python3") else sys.executable


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    add = parser.add_argument
    add("--host", default="127.0.0.1")
    add("--port", type=int, default=8765)
    add("--python", default=default_python(), help="Interpreter for the code.")
    add("--isolation", choices=("auto", "bwrap", "rlimits"), default="auto")
    add("--allow-weak", action="store_true", help="Run even when isolation is weak.")
    add("--cgroup", choices=("auto", "off"), default="auto")
    add("--pool-size", type=int, default=4, help="Runs at once; more wait in a queue.")
    add("--spares", type=int, default=1, help="Runs' processes kept started ahead.")
    add("--uid-base", type=int, default=2_000_000, help="First uid of the per-run range.")
    add("--uid-count", type=int, default=1024, help="Size of the range (0: nobody).")
    add("--state-dir", default="/run/studio-sandbox", help="Lock files of the uids.")
    return parser.parse_args(argv)


def host_from_args(args: argparse.Namespace) -> HostConfig:
    return HostConfig(
        isolation=args.isolation,
        allow_weak=args.allow_weak,
        cgroup=args.cgroup,
        uid_base=args.uid_base,
        uid_count=args.uid_count,
        state_dir=args.state_dir,
        python=args.python,
        pool_size=args.pool_size,
        spares=args.spares,
    )


def main(argv: list[str] | None = None) -> None:
    args = parse_args(argv)
    host = host_from_args(args)
    if host.cgroup != "off":
        # Alone in its container, the service may move itself into a leaf cgroup so
        # that cgroup v2 lets it create one cgroup per run beside it.
        backend_detect(move_self=True)
    SandboxHandler.host_config = host
    caps = capabilities(host)
    server = ThreadingHTTPServer((args.host, args.port), SandboxHandler)
    server.daemon_threads = True
    state = caps.refusal or ("isolated" if caps.strong else "weak isolation (--allow-weak)")
    print(f"sandbox on {args.host}:{args.port}, mode {caps.mode}: {state}", flush=True)
    server.serve_forever()


if __name__ == "__main__":
    main()
