"""The sandbox service module in-process (a real HTTP server on 127.0.0.1, real sandboxes):
the run limits come from the studio's request and are checked, a host that cannot
isolate runs answers 503 with the reason, /status describes what a run gets."""

from __future__ import annotations

import json
import secrets
import threading
import urllib.error
import urllib.request
from collections.abc import Iterator
from dataclasses import replace
from http.server import ThreadingHTTPServer
from typing import Any

import pytest

from tools_app.types.python import host_config, run_limits
from tools_app.types.python.server import SandboxHandler


class Service:
    def __init__(self, **host: Any) -> None:
        config = replace(host_config(), **host)
        self.token = secrets.token_urlsafe(32)
        attributes = {"host_config": config, "token": self.token}
        handler = type("Handler", (SandboxHandler,), attributes)
        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), handler)
        self.httpd.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}"
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()

    def call(self, path: str, body: Any = None) -> tuple[int, dict[str, Any]]:
        data = None if body is None else json.dumps(body).encode()
        headers = {"Authorization": f"Bearer {self.token}"}
        request = urllib.request.Request(self.url + path, data=data, headers=headers)  # noqa: S310
        try:
            with urllib.request.urlopen(request, timeout=60) as response:  # noqa: S310
                # /run answers NDJSON: the result is its last line.
                return response.status, json.loads(response.read().splitlines()[-1])
        except urllib.error.HTTPError as exc:
            return exc.code, json.loads(exc.read())

    def stop(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


@pytest.fixture
def service() -> Iterator[Service]:
    server = Service()
    yield server
    server.stop()


def limits(**changes: Any) -> dict[str, Any]:
    return {**run_limits().as_dict(), **changes}


def test_health_says_whether_runs_are_isolated(service):
    status, body = service.call("/health")

    assert status == 200
    assert body == {"ok": True, "isolation": "bwrap", "strong": True, "refusal": ""}


def test_a_run_gets_the_limits_the_studio_sends(service):
    fork_until_refused = (
        "import os, time\nn = 0\ntry:\n    while n < 1000:\n        if os.fork() == 0:\n"
        "            time.sleep(5)\n            os._exit(0)\n        n += 1\n"
        "except OSError:\n    pass\nreturn n"
    )

    request = {"code": fork_until_refused, "timeout": 20, "limits": limits(pids=16)}

    status, body = service.call("/run", request)

    assert status == 200 and body["ok"] is True, body
    assert 0 < body["output"] < 16
    assert body["isolation"] == "bwrap: own uid, 16 processes, 256 MB, 1 CPU (cgroup v1)"


def test_status_describes_a_run_under_the_sent_limits(service):
    status, body = service.call("/status", {"limits": limits(pids=32, memory_mb=128)})

    assert status == 200
    assert body["label"] == "bwrap: own uid, 32 processes, 128 MB, 1 CPU (cgroup v1)"
    assert body["strong"] is True and body["refusal"] == ""


@pytest.mark.parametrize(
    ("body", "error"),
    [
        ({"code": "return 1", "timeout": 5}, "bad request: limits: must be an object"),
        (
            {"code": "return 1", "timeout": 5, "limits": limits(pids="many")},
            "bad request: limits.pids: must be a number",
        ),
        (
            {"code": "return 1", "timeout": 5, "limits": limits(memory_mb=1)},
            "bad request: limits.memory_mb: must be between 16 and 1048576",
        ),
        ({"code": 7, "timeout": 5, "limits": limits()}, "bad request: code must be a string"),
        ({"code": "return 1", "timeout": -1, "limits": limits()}, "bad request: timeout"),
    ],
)
def test_a_bad_request_is_refused_with_what_is_wrong(service, body, error):
    status, answer = service.call("/run", body)

    assert status == 400
    assert answer["error"].startswith(error)


def test_a_host_that_cannot_isolate_runs_answers_503_with_the_reason():
    weak = Service(uid_count=0, cgroup="off")
    try:
        status, body = weak.call("/run", {"code": "return 1", "timeout": 5, "limits": limits()})
        health_status, health = weak.call("/health")
    finally:
        weak.stop()

    assert status == 503
    assert body["refused"] is True
    assert body["error"].startswith("Python tools are disabled on this server")
    assert health_status == 200 and health["ok"] is False
