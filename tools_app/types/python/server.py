"""The sandbox service of docker-compose: `python -m tools_app.types.python.server
--host 0.0.0.0 --port 8765`.

- POST /run {"code", "input", "timeout", "tenant", "limits"} runs the code with
  tools_app.types.python.sandbox under the limits the studio sends (its settings) and
  answers 200 with NDJSON: a `{"state": "waiting", "note"}` line when the run has to wait
  for a slot, `{"state": "running"}` once it got one, then the result as the last line.
  `tenant` is the owner key whose share of the pool the run takes. 503 with
  {"refused": true, "error"} when this host cannot isolate runs and --allow-weak was
  not given.
- POST /status {"limits"} answers what a run gets here (the console's badge).
- GET /health answers the isolation mode and whether runs are refused.

/run and /status need `Authorization: Bearer <token>`, the secret shared with the studio
(STUDIO_SANDBOX_TOKEN or STUDIO_SANDBOX_TOKEN_FILE in the service's environment); any
other request is answered 401 and runs nothing. The limits a request asks for must stay
within this service's maxima (--max-memory-mb and its siblings): above one, the request
is refused with 400 naming the limit, never clamped, so that what a run gets is what
the studio's console says it gets, and a studio configured beyond the operator's bounds
finds out on its first call.

How this host isolates runs (pool size, share per owner, uid range, cgroups, mode) and
how much a run may ask for are the service's own command line. It never configures
Django nor reads the studio's settings, so the service needs neither the studio's
settings nor its secrets. It must only be reachable on the deployment's internal network
(the web and worker services).
"""

from __future__ import annotations

import argparse
import asyncio
import hmac
import json
import os
import sys
from dataclasses import dataclass
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
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
    "output_mb": (int, 1, 1 << 10),
}


@dataclass(frozen=True)
class Caps:
    """The most a request may ask for (the operator's flags). A run's CPU time limit is
    its timeout (rounded up), so `timeout` caps CPU seconds too; `cpus` caps its share
    of the host's CPUs, and a request for no CPU cap at all (0) is above it."""

    memory_mb: int = 1024
    pids: int = 256
    cpus: float = 2.0
    tmp_mb: int = 256
    timeout: float = 300.0
    queue_wait: float = 300.0
    output_mb: int = 16

    def check(self, limits: RunLimits, timeout: float | None = None) -> None:
        above = {
            "memory_mb": (limits.memory_mb, self.memory_mb, "MB"),
            "pids": (limits.pids, self.pids, "processes"),
            "cpus": (limits.cpus or float("inf"), self.cpus, "CPUs"),
            "tmp_mb": (limits.tmp_mb, self.tmp_mb, "MB"),
            "max_timeout": (limits.max_timeout, self.timeout, "s"),
            "queue_wait": (limits.queue_wait, self.queue_wait, "s"),
            "output_mb": (limits.output_mb, self.output_mb, "MB"),
        }
        if timeout is not None:
            above["timeout"] = (timeout, self.timeout, "s")
        for name, (value, most, unit) in above.items():
            if value > most:
                asked = "no cap" if value == float("inf") else f"{value:g}"
                where = name if name == "timeout" else f"limits.{name}"
                raise BadRequest(
                    f"{where}: {asked} is above this sandbox service's maximum of "
                    f"{most:g} {unit} (its --max-* flags)"
                )


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
    caps: Caps = Caps()
    token: str = ""  # empty: every /run and /status is refused (main refuses to start)

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
        # Read before any answer: a socket closed with unread data resets, and the
        # caller would see a reset instead of the 401.
        raw = self.rfile.read(length)
        if not self._authenticated():
            return self._send(HTTPStatus.UNAUTHORIZED, {"error": "unauthenticated"})
        try:
            body = json.loads(raw)
            if not isinstance(body, dict):
                raise BadRequest("the body must be a JSON object")
            limits = parse_limits(body.get("limits"))
            if self.path == "/status":
                self.caps.check(limits)
                summary = capabilities(self.host_config).summary(limits)
                return self._send(HTTPStatus.OK, summary)
            code, timeout = body["code"], body.get("timeout", 30)
            if not isinstance(code, str) or isinstance(timeout, bool):
                raise BadRequest("code must be a string and timeout a number")
            timeout, tenant = float(timeout), str(body.get("tenant") or "")
            if not 0 < timeout:
                raise BadRequest("timeout")
            self.caps.check(limits, timeout)
        except (ValueError, KeyError, TypeError) as exc:
            return self._send(HTTPStatus.BAD_REQUEST, {"error": f"bad request: {exc}"})
        refusal = capabilities(self.host_config).refusal
        if refusal:
            body = {"ok": False, "refused": True, "error": refusal, "isolation": None}
            return self._send(HTTPStatus.SERVICE_UNAVAILABLE, body)
        self._run(code, body.get("input"), timeout, limits, tenant)

    def _authenticated(self) -> bool:
        scheme, _, given = (self.headers.get("Authorization") or "").partition(" ")
        expected = self.token.encode()
        return (
            bool(expected)
            and scheme == "Bearer"
            and hmac.compare_digest(given.strip().encode(), expected)
        )

    def _run(self, code: str, input: Any, timeout: float, limits: RunLimits, tenant: str) -> None:  # noqa: A002
        self.send_response(HTTPStatus.OK)
        self.send_header("Content-Type", "application/x-ndjson")
        self.end_headers()

        async def on_wait(note: str | None) -> None:
            self._line({"state": "waiting", "note": note} if note else {"state": "running"})

        try:
            result = asyncio.run(
                sandbox_run(
                    code,
                    input,
                    timeout=timeout,
                    host=self.host_config,
                    limits=limits,
                    tenant=tenant,
                    on_wait=on_wait,
                )
            )
            self._line(result)
        except (BrokenPipeError, ConnectionResetError):
            pass  # the caller left (a waiting run then gives its place in the queue up)

    def _line(self, data: dict[str, Any]) -> None:
        self.wfile.write(json.dumps(data).encode() + b"\n")
        self.wfile.flush()

    def _send(self, status: HTTPStatus, data: dict) -> None:
        payload = json.dumps(data).encode()
        self.send_response(status)
        if status == HTTPStatus.UNAUTHORIZED:
            self.send_header("WWW-Authenticate", "Bearer")
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(payload)))
        self.end_headers()
        self.wfile.write(payload)

    def log_message(self, format: str, *args: object) -> None:  # noqa: A002
        pass  # one line per run would drown the service's log


def token_from_env() -> str:
    """STUDIO_SANDBOX_TOKEN, or the file STUDIO_SANDBOX_TOKEN_FILE names (a secret)."""
    path = os.environ.get("STUDIO_SANDBOX_TOKEN_FILE")
    if path:
        return Path(path).read_text().strip()
    return os.environ.get("STUDIO_SANDBOX_TOKEN", "").strip()


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
    add("--owner-slots", type=int, default=2, help="Runs at once of one owner (user).")
    add("--spares", type=int, default=1, help="Runs' processes kept started ahead.")
    add("--uid-base", type=int, default=2_000_000, help="First uid of the per-run range.")
    add("--uid-count", type=int, default=1024, help="Size of the range (0: nobody).")
    add("--state-dir", default="/run/studio-sandbox", help="Lock files of the uids.")
    most = Caps()
    add("--max-memory-mb", type=int, default=most.memory_mb, help="Most memory a run may ask.")
    add("--max-pids", type=int, default=most.pids, help="Most processes a run may ask.")
    add("--max-cpus", type=float, default=most.cpus, help="Most CPUs a run may ask.")
    add("--max-tmp-mb", type=int, default=most.tmp_mb, help="Largest /tmp a run may ask.")
    add("--max-timeout", type=float, default=most.timeout, help="Longest timeout (CPU s).")
    add("--max-queue-wait", type=float, default=most.queue_wait, help="Longest queue wait.")
    add("--max-output-mb", type=int, default=most.output_mb, help="Most output of a run.")
    args = parser.parse_args(argv)
    if not 1 <= args.owner_slots:
        parser.error("--owner-slots must be at least 1")
    return args


def caps_from_args(args: argparse.Namespace) -> Caps:
    return Caps(
        memory_mb=args.max_memory_mb,
        pids=args.max_pids,
        cpus=args.max_cpus,
        tmp_mb=args.max_tmp_mb,
        timeout=args.max_timeout,
        queue_wait=args.max_queue_wait,
        output_mb=args.max_output_mb,
    )


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
        owner_slots=args.owner_slots,
    )


def main(argv: list[str] | None = None) -> None:
    args = parse_args(argv)
    token = token_from_env()
    if not token:
        sys.exit(
            "sandbox: set STUDIO_SANDBOX_TOKEN or STUDIO_SANDBOX_TOKEN_FILE (the secret "
            "the studio's web processes and workers send); refusing to start without it."
        )
    host = host_from_args(args)
    if host.cgroup != "off":
        # Alone in its container, the service may move itself into a leaf cgroup so
        # that cgroup v2 lets it create one cgroup per run beside it.
        backend_detect(move_self=True)
    SandboxHandler.host_config = host
    SandboxHandler.caps = caps_from_args(args)
    SandboxHandler.token = token
    caps = capabilities(host)
    server = ThreadingHTTPServer((args.host, args.port), SandboxHandler)
    server.daemon_threads = True
    state = caps.refusal or ("isolated" if caps.strong else "weak isolation (--allow-weak)")
    print(f"sandbox on {args.host}:{args.port}, mode {caps.mode}: {state}", flush=True)
    server.serve_forever()


if __name__ == "__main__":
    main()
