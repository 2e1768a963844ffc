"""Fixtures shared by the whole suite: the named cast, API clients, and real processes
(a Celery worker, a Daphne server) and headless Chromium for the tests that need them.

Real parts: the database is PostgreSQL and the broker Redis (studio/settings_test.py).
Processes started here read the *test* database, so tests that use them must commit
their rows: mark them `@pytest.mark.django_db(transaction=True)`.
"""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from pathlib import Path
from urllib.parse import quote

import pytest
from django.contrib.auth import get_user_model
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient

ROOT = Path(__file__).resolve().parent.parent
CHROMIUM = os.environ.get("STUDIO_CHROMIUM", "/usr/bin/chromium")


# --- the cast ---------------------------------------------------------------------------
def _user(username: str, **extra):
    return get_user_model().objects.create_user(
        username=username, password="password", email=f"{username}@example.com", **extra
    )


@pytest.fixture
def owner(db):
    return _user("owner")


@pytest.fixture
def teammate(db):
    return _user("teammate")


@pytest.fixture
def outsider(db):
    return _user("outsider")


@pytest.fixture
def admin_user(db):
    return _user("admin", is_staff=True, is_superuser=True)


@pytest.fixture
def anon_client() -> APIClient:
    return APIClient()


@pytest.fixture
def api(owner) -> APIClient:
    """An API client signed in as `owner` (session auth)."""
    client = APIClient()
    client.force_authenticate(owner)
    return client


@pytest.fixture
def token_client(owner) -> APIClient:
    token = Token.objects.create(user=owner)
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {token.key}")
    return client


@pytest.fixture
def outsider_api(outsider) -> APIClient:
    client = APIClient()
    client.force_authenticate(outsider)
    return client


# --- real processes -----------------------------------------------------------------------
@pytest.fixture
def embedded_data_dir() -> Iterator[Path]:
    """A data folder for an embedded studio, whose PostgreSQL server runs as another user
    when the tests run as root: directly under the system's temp folder, since pytest's own
    (pytest-of-<user>) is made private again by every session that starts."""
    path = Path(tempfile.mkdtemp(prefix="studio-embedded-"))
    path.chmod(0o755)
    yield path
    # A server a failed test left running: a fast shutdown before its files go.
    for postmaster in path.glob("**/postmaster.pid"):
        with suppress(OSError, ValueError):
            os.kill(int(postmaster.read_text().split()[0]), signal.SIGINT)
    shutil.rmtree(path, ignore_errors=True)


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def wait_for_port(
    port: int, *, timeout: float = 30.0, proc: subprocess.Popen | None = None
) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc is not None and proc.poll() is not None:
            raise RuntimeError(f"process exited with {proc.returncode} before listening")
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.5):
                return
        except OSError:
            time.sleep(0.1)
    raise TimeoutError(f"nothing listened on 127.0.0.1:{port} within {timeout}s")


def child_process_env(**extra: str) -> dict[str, str]:
    """Environment for a child process that must use this test run's database and Redis."""
    from django.conf import settings
    from django.db import connection

    db = connection.settings_dict
    url = (
        # A unix socket's folder (the embedded server) is the host, percent-encoded.
        f"postgres://{db['USER'] or 'postgres'}@{quote(db['HOST'] or '127.0.0.1', safe='')}"
        f":{db['PORT'] or 5432}/{db['NAME']}"
    )
    env = {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "studio.settings_test",
        "DATABASE_URL": url,
        "REDIS_URL": settings.REDIS_URL,
        "STUDIO_TEST_REDIS_LAYER": "1",
        # The checkout first, then whatever the test run itself was given.
        "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")])),
        "DJANGO_ALLOW_ASYNC_UNSAFE": "true",
        "STUDIO_RUN_SETTLE_HEAP": "1",  # as in production (the test process keeps it off)
    }
    env.update(extra)
    return env


def stop_process(proc: subprocess.Popen, *, timeout: float = 10.0) -> None:
    if proc.poll() is None:
        proc.terminate()
        try:
            proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


@contextmanager
def celery_worker_process(*extra_args: str, **env: str) -> Iterator[subprocess.Popen]:
    """A real `celery worker` process against Redis, reading the test database."""
    from studio.celery import app

    app.control.purge()
    (ROOT / ".studio").mkdir(exist_ok=True)
    # Its own name, so that the ping below waits for this worker, not for any other one
    # already running (tests may start several).
    name = f"test-{os.getpid()}-{time.monotonic_ns()}@{socket.gethostname()}"
    log = open(ROOT / ".studio" / f"test-worker-{name.split('@')[0]}.log", "wb")  # noqa: SIM115
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "celery",
            "-A",
            "studio",
            "worker",
            "--pool=solo",
            "--concurrency=1",
            "--without-gossip",
            "--without-mingle",
            "--loglevel=INFO",
            f"--hostname={name}",
            *extra_args,
        ],
        cwd=ROOT,
        env=child_process_env(**env),
        stdout=log,
        stderr=subprocess.STDOUT,
    )
    try:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            if proc.poll() is not None:
                raise RuntimeError(f"celery worker exited with {proc.returncode}; see {log.name}")
            if app.control.ping(destination=[name], timeout=0.5):
                break
        else:
            raise TimeoutError("celery worker did not answer a ping within 60s")
        yield proc
    finally:
        stop_process(proc)
        log.close()


@pytest.fixture
def celery_worker(transactional_db) -> Iterator[subprocess.Popen]:
    with celery_worker_process() as proc:
        yield proc


@contextmanager
def daphne_process(**env: str) -> Iterator[str]:
    """A real Daphne server on a free port, started as production starts it (`manage.py
    serve`, with the studio's websocket limits); yields its base URL."""
    port = free_port()
    (ROOT / ".studio").mkdir(exist_ok=True)
    log = open(ROOT / ".studio" / f"test-daphne-{port}.log", "wb")  # noqa: SIM115
    proc = subprocess.Popen(
        [
            sys.executable,
            "manage.py",
            "serve",
            "--host",
            "127.0.0.1",
            "--port",
            str(port),
        ],
        cwd=ROOT,
        env=child_process_env(**env),
        stdout=log,
        stderr=subprocess.STDOUT,
    )
    try:
        wait_for_port(port, proc=proc)
        yield f"http://127.0.0.1:{port}"
    finally:
        stop_process(proc)
        log.close()


@pytest.fixture
def studio_server(transactional_db) -> Iterator[str]:
    """A Daphne process serving the studio (HTTP and websockets) over the test database."""
    with daphne_process() as url:
        yield url


# --- headless Chromium --------------------------------------------------------------------
@pytest.fixture(scope="session")
def browser():
    """Debian's Chromium driven by Playwright (it cannot download its own browser here)."""
    if not Path(CHROMIUM).exists():
        pytest.fail(f"{CHROMIUM} is missing: install Debian's chromium (see .ci/run)")
    # Playwright's sync API runs an event loop in this thread; the ORM calls the tests
    # make around it are still plain synchronous calls.
    os.environ["DJANGO_ALLOW_ASYNC_UNSAFE"] = "true"
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(
            executable_path=CHROMIUM,
            headless=True,
            args=[
                "--no-sandbox",
                "--disable-gpu",
                "--disable-quic",
                "--no-first-run",
                "--disable-background-networking",
                "--disable-component-update",
                "--disable-sync",
            ],
        )
        yield browser
        browser.close()


@pytest.fixture(autouse=True)
def _browser_contexts_closed(request) -> Iterator[None]:
    """Every browser context a test opened is closed when it ends: a page left open goes
    on polling (and reconnecting its sockets) for the rest of the session."""
    yield
    browser = getattr(request.node, "funcargs", {}).get("browser")
    if browser is not None:
        for context in browser.contexts:
            context.close()


def browser_login(browser, base_url: str, username: str):
    """A new browser context signed in as `username`, on the page the login form leads to;
    returns the page. The session is made as the login view makes it (the test client's
    force_login writes it to the test database) and its cookie is put in the context, so
    no test pays for the form: tests/frontend/test_login_form.py signs in through it."""
    from django.conf import settings
    from django.test import Client
    from django.urls import reverse

    client = Client()
    client.force_login(get_user_model().objects.get(username=username))
    context = browser.new_context(viewport={"width": 1400, "height": 900})
    context.add_cookies(
        [
            {
                "name": settings.SESSION_COOKIE_NAME,
                "value": client.cookies[settings.SESSION_COOKIE_NAME].value,
                "url": base_url,
            }
        ]
    )
    page = context.new_page()
    page.goto(f"{base_url}{reverse(settings.LOGIN_REDIRECT_URL)}")
    return page


def browser_login_form(browser, base_url: str, username: str, password: str = "password"):
    """A new browser context signed in through the real login form; returns the page."""
    context = browser.new_context(viewport={"width": 1400, "height": 900})
    page = context.new_page()
    page.goto(f"{base_url}/accounts/login/")
    page.fill("input[name=username]", username)
    page.fill("input[name=password]", password)
    page.click("button[type=submit]")
    page.wait_for_url(f"{base_url}/**")
    return page


# --- local model servers (tests/model_servers.py) ------------------------------------------
@pytest.fixture
def openai_server(settings) -> Iterator:
    """An OpenAI-protocol server on 127.0.0.1, on the operator's list of model servers."""
    from tests.model_servers import OpenAIServer, serve

    with serve(OpenAIServer()) as server:
        settings.STUDIO_MODEL_API_BASES = [*settings.STUDIO_MODEL_API_BASES, server.origin]
        yield server


@pytest.fixture
def anthropic_server(settings) -> Iterator:
    """An Anthropic Messages-protocol server on 127.0.0.1, on the operator's list."""
    from tests.model_servers import AnthropicServer, serve

    with serve(AnthropicServer(key="ant-good")) as server:
        settings.STUDIO_MODEL_API_BASES = [*settings.STUDIO_MODEL_API_BASES, server.origin]
        yield server


@pytest.fixture
def ollama_canary(settings, monkeypatch):
    """A canary model server on 127.0.0.1 where litellm sends an `ollama/...` model that has
    no base (OLLAMA_API_BASE), on no list of the operator: it must never see a connection
    (tests/agents_core/canary.py)."""
    from tests.agents_core.canary import canary_server

    settings.STUDIO_MODEL_RETRIES = 0
    with canary_server() as server:
        monkeypatch.setenv("OLLAMA_API_BASE", server.origin)
        yield server


def pytest_collection_modifyitems(config, items) -> None:
    """Run the browser tests last.

    Playwright's sync API keeps an event loop running in the main thread once a session
    browser is up; async tests (pytest-asyncio, Channels' communicator) that ran after it
    would find a loop already running. Moving browser tests to the end keeps the session
    browser shared and the async tests clean. The sort is stable: files keep their order.
    """

    def uses_browser(item) -> bool:
        return item.get_closest_marker("browser") is not None or "browser" in getattr(
            item, "fixturenames", ()
        )

    items.sort(key=uses_browser)
