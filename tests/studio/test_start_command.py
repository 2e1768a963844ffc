"""`make run`'s command: the embedded studio starts with no services and serves pages."""

from __future__ import annotations

import os
import re
import subprocess
import sys

import httpx
import pytest

from tests.conftest import ROOT, free_port, stop_process, wait_for_port


@pytest.fixture
def embedded_env(embedded_data_dir) -> dict[str, str]:
    env = {
        key: value
        for key, value in os.environ.items()
        if key
        not in {
            "DATABASE_URL",
            "REDIS_URL",
            "SECRET_KEY",
            "STUDIO_ENCRYPTION_KEYS",
            "DJANGO_SETTINGS_MODULE",
        }
    }
    env.update({"STUDIO_EMBEDDED": "1", "STUDIO_DATA_DIR": str(embedded_data_dir)})
    return env


@pytest.mark.slow
def test_the_embedded_studio_starts_signs_in_and_lists_the_demo_agents(
    embedded_env, embedded_data_dir
):
    tmp_path = embedded_data_dir
    port = free_port()
    log_path = tmp_path / "studio.log"
    with open(log_path, "wb") as log:
        proc = subprocess.Popen(
            [sys.executable, "manage.py", "runstudio", "--port", str(port)],
            cwd=ROOT,
            env=embedded_env,
            stdout=log,
            stderr=subprocess.STDOUT,
        )
        try:
            wait_for_port(port, timeout=90, proc=proc)
            base = f"http://127.0.0.1:{port}"
            assert httpx.get(f"{base}/").status_code == 302  # sign-in required
            password = (tmp_path / "admin_password").read_text().strip()
            with httpx.Client(base_url=base) as client:
                login = client.get("/accounts/login/")
                token = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', login.text)
                response = client.post(
                    "/accounts/login/",
                    data={
                        "username": "admin",
                        "password": password,
                        "csrfmiddlewaretoken": token.group(1),
                    },
                    headers={"Referer": f"{base}/accounts/login/"},
                    follow_redirects=True,
                )
                assert response.status_code == 200
                assert "Weather assistant" in response.text
                assert "unit_convert" in response.text
        finally:
            stop_process(proc)
    output = log_path.read_text()
    assert f"Sign in as  admin / {password}" in output
    assert "beat: Starting..." in output  # scheduled jobs (digests) run embedded too
    # Its data lives in its own PostgreSQL server, in the data folder.
    assert (tmp_path / "pgdata" / "PG_VERSION").read_text().strip() == "18"
    # Stopped by SIGTERM, it leaves no process behind: no worker or beat child outlives it,
    # and its PostgreSQL server stops with it.
    assert _processes_with(f"runstudio --port {port}") == []
    assert not (tmp_path / "pgdata" / "postmaster.pid").exists()
    assert _processes_with(str(tmp_path / "pgdata")) == []


def _processes_with(text: str) -> list[int]:
    found = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/cmdline", "rb") as handle:
                    command = handle.read().replace(b"\0", b" ").decode(errors="replace")
            except OSError:
                continue
            if text in command:
                found.append(int(entry))
    return found


def test_importing_the_project_does_not_import_litellm(embedded_env):
    code = (
        "import django, sys; django.setup(); "
        "import studio.asgi; "
        "print('litellm' in sys.modules, __import__('os').environ['LITELLM_LOCAL_MODEL_COST_MAP'])"
    )
    result = subprocess.run(
        [sys.executable, "-c", code],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
        env={**embedded_env, "DJANGO_SETTINGS_MODULE": "studio.settings"},
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.split() == ["False", "True"]


def test_docker_compose_file_is_valid(tmp_path):
    if not os.path.exists("/usr/bin/docker-compose"):
        pytest.skip("Debian's docker-compose is not installed (.ci/run installs it)")
    # Validate a copy, so that the secret files compose names exist without touching the
    # checkout's own .studio/ (the embedded studio reads its secrets from there).
    compose = tmp_path / "docker-compose.yml"
    compose.write_text((ROOT / "docker-compose.yml").read_text())
    (tmp_path / ".studio").mkdir()
    for name in ("secret_key", "encryption_key", "sandbox_token"):
        (tmp_path / ".studio" / name).write_text("not-a-real-secret")
    result = subprocess.run(
        ["docker-compose", "-f", str(compose), "config", "-q"],
        capture_output=True,
        text=True,
        timeout=60,
        cwd=tmp_path,
    )
    assert result.returncode == 0, result.stderr
