"""GET /healthz through the studio's ASGI application: the real PostgreSQL and Redis, a
real sandbox service on 127.0.0.1, and closed ports for the parts that are down."""

from __future__ import annotations

import json
from collections.abc import Iterator

import pytest
from channels.testing import HttpCommunicator

from studio.asgi import application
from tests.conftest import free_port
from tests.tools_app.engine.test_python_sandbox_service import Service

pytestmark = pytest.mark.django_db


async def get(
    path: str = "/healthz", *, method: str = "GET", host: str = "127.0.0.1"
) -> tuple[int, dict, dict]:
    communicator = HttpCommunicator(application, method, path, headers=[(b"host", host.encode())])
    response = await communicator.get_response(timeout=30)
    headers = {k.decode(): v.decode() for k, v in response["headers"]}
    body = json.loads(response["body"]) if response["body"] else {}
    return response["status"], body, headers


@pytest.fixture
def sandbox() -> Iterator[Service]:
    service = Service()
    yield service
    service.stop()


async def test_it_answers_200_when_the_database_redis_and_the_sandbox_answer(settings, sandbox):
    settings.STUDIO_SANDBOX_URL = sandbox.url

    status, body, headers = await get()

    assert status == 200
    assert body == {"database": "ok", "redis": "ok", "sandbox": "ok"}
    assert headers["content-type"] == "application/json"
    assert headers["cache-control"] == "no-store"


async def test_parts_that_are_not_configured_do_not_fail_it(settings):
    settings.REDIS_URL = ""
    settings.STUDIO_SANDBOX_URL = ""

    status, body, _ = await get()

    assert status == 200
    assert body == {"database": "ok", "redis": "not configured", "sandbox": "not configured"}


async def test_redis_on_a_closed_port_is_503_naming_redis_without_its_address(settings):
    port = free_port()
    settings.REDIS_URL = f"redis://127.0.0.1:{port}/0"
    settings.STUDIO_SANDBOX_URL = ""

    status, body, _ = await get()

    assert status == 503
    assert body["database"] == "ok"
    assert body["redis"].startswith("error: ")
    assert str(port) not in json.dumps(body) and "127.0.0.1" not in json.dumps(body)


async def test_a_sandbox_service_on_a_closed_port_is_503_naming_the_sandbox(settings):
    port = free_port()
    settings.STUDIO_SANDBOX_URL = f"http://127.0.0.1:{port}"

    status, body, _ = await get()

    assert status == 503
    assert (body["database"], body["redis"]) == ("ok", "ok")
    assert body["sandbox"].startswith("error: ")
    assert str(port) not in json.dumps(body)


async def test_a_sandbox_that_refuses_runs_is_503(settings):
    weak = Service(uid_count=0, cgroup="off")
    settings.STUDIO_SANDBOX_URL = weak.url
    try:
        status, body, _ = await get()
    finally:
        weak.stop()

    assert status == 503
    assert body["sandbox"] == "error: it refuses runs"


async def test_a_probe_needs_no_sign_in_no_https_and_no_allowed_host(settings):
    """Probes call the container's own address over plain HTTP, without a session."""
    settings.SECURE_SSL_REDIRECT = True
    settings.ALLOWED_HOSTS = ["studio.example.com"]
    settings.STUDIO_SANDBOX_URL = ""

    status, body, _ = await get(host="10.1.2.3:8000")
    head_status, head_body, _ = await get(method="HEAD")
    post_status, _, post_headers = await get(method="POST")

    assert status == 200 and body["database"] == "ok"
    assert (head_status, head_body) == (200, {})
    assert (post_status, post_headers["allow"]) == (405, "GET, HEAD")


async def test_other_paths_still_go_to_django(settings):
    settings.STUDIO_SANDBOX_URL = ""

    status, _, headers = await get("/healthz/")

    assert status == 302 and "/accounts/login/" in headers["Location"]


async def test_parts_names_the_checks_a_probe_decides_on(settings):
    settings.STUDIO_SANDBOX_URL = f"http://127.0.0.1:{free_port()}"

    everything, _, _ = await get()
    status, body, _ = await get("/healthz?parts=database,redis")
    alive, nothing, _ = await get("/healthz?parts=")

    assert everything == 503
    assert (status, body) == (200, {"database": "ok", "redis": "ok"})
    assert (alive, nothing) == (200, {})


async def test_an_unknown_part_is_a_400_naming_it(settings):
    status, body, _ = await get("/healthz?parts=database,cache")

    assert status == 400
    assert "'cache'" in body["detail"]
