"""A release as a team installs and runs it, for tests/deploy: the wheel built from the
checkout, a fresh virtualenv outside it with the runtime lock (hashes) and the wheel, and
the production process set started from that virtualenv with its `studio` commands.

Nothing here imports the checkout into those processes: they start in a folder of their
own, with an environment made from scratch (no PYTHONPATH, no test settings).
"""

from __future__ import annotations

import fcntl
import hashlib
import os
import re
import secrets
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import httpx

from tests.conftest import ROOT, free_port, wait_for_port

# Generous bounds: a loaded 2-core machine installs and starts slowly; every wait below
# ends as soon as its condition holds.
INSTALL_TIMEOUT = 900
START_TIMEOUT = 120
PROXY_HEADERS = {"X-Forwarded-Proto": "https"}  # what the TLS-terminating proxy adds


def run(args: list[str], *, timeout: float = 300, **kwargs: Any) -> str:
    """Run a command to its end; its output, or an error that shows it."""
    done = subprocess.run(
        args, capture_output=True, text=True, timeout=timeout, check=False, **kwargs
    )
    if done.returncode != 0:
        raise AssertionError(
            f"{' '.join(args)} exited with {done.returncode}\n{done.stdout}\n{done.stderr}"
        )
    return done.stdout + done.stderr


def wheel_build(outdir: Path) -> Path:
    """Build the studio's wheel into `outdir` (as `make wheel` does) and return it. The build
    writes in the checkout (build/, *.egg-info), so two pytest-xdist workers building at
    once (the package test and the release-boot test) take turns on a lock file."""
    checkout = hashlib.sha256(bytes(ROOT)).hexdigest()[:12]
    lock = Path(tempfile.gettempdir()) / f"agent-studio-wheel-{checkout}.lock"
    with lock.open("w") as held:
        fcntl.flock(held, fcntl.LOCK_EX)
        build = [sys.executable, "-m", "build", "--wheel", "--no-isolation"]
        run([*build, "--outdir", str(outdir), "."], cwd=ROOT, timeout=600)
    (wheel,) = outdir.glob("agent_studio-*.whl")
    return wheel


@dataclass
class Release:
    """The installed release: its virtualenv, and how long each step took."""

    wheel: Path
    venv: Path
    seconds: dict[str, float] = field(default_factory=dict)

    @property
    def python(self) -> str:
        return str(self.venv / "bin" / "python")

    @property
    def studio(self) -> str:
        return str(self.venv / "bin" / "studio")


def release_install(workdir: Path) -> Release:
    """Build the wheel (as `make wheel` and the image do), make a virtualenv outside the
    checkout, install the runtime lock with its hashes, then the wheel alone."""
    started = time.monotonic()
    wheel = wheel_build(workdir / "dist")
    built = time.monotonic()
    venv = workdir / "venv"
    run([sys.executable, "-m", "venv", str(venv)], cwd=workdir)
    release = Release(wheel=wheel, venv=venv)
    pip = [release.python, "-m", "pip", "install", "--quiet", "--disable-pip-version-check"]
    lock = str(ROOT / "requirements" / "runtime.txt")
    run([*pip, "--require-hashes", "-r", lock], cwd=workdir, timeout=INSTALL_TIMEOUT)
    run([*pip, "--no-deps", str(wheel)], cwd=workdir)
    # The lock holds every dependency the wheel declares, at versions it accepts.
    run([release.python, "-m", "pip", "check"], cwd=workdir)
    release.seconds = {"build": built - started, "install": time.monotonic() - built}
    return release


def fernet_key() -> str:
    from cryptography.fernet import Fernet

    return Fernet.generate_key().decode()


def deployment_env(*, data_dir: Path, database_url: str, redis_url: str) -> dict[str, str]:
    """The environment of every studio process, as a production deployment sets it:
    DEBUG off, a long random secret, HTTPS behind a proxy, run workers."""
    return {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": str(data_dir),
        "LANG": "C.UTF-8",
        "DJANGO_SETTINGS_MODULE": "studio.settings",
        "DEBUG": "false",
        "SECRET_KEY": secrets.token_urlsafe(64),
        "STUDIO_ENCRYPTION_KEYS": fernet_key(),
        "DATABASE_URL": database_url,
        "REDIS_URL": redis_url,
        "ALLOWED_HOSTS": "127.0.0.1",
        "STUDIO_DATA_DIR": str(data_dir),
        "STATIC_ROOT": str(data_dir / "static"),
        "STUDIO_RUN_EXECUTOR": "worker",
        # Its own channel-layer prefix: pub/sub is shared by every Redis database.
        "STUDIO_CHANNEL_PREFIX": f"studio-boot-{os.getpid()}",
        "SECURE_SSL_REDIRECT": "true",
        "SECURE_PROXY_SSL_HEADER": "HTTP_X_FORWARDED_PROTO:https",
        "SECURE_HSTS_SECONDS": "31536000",
        "SECURE_HSTS_INCLUDE_SUBDOMAINS": "true",
        "SECURE_HSTS_PRELOAD": "true",
        "LITELLM_LOCAL_MODEL_COST_MAP": "True",
    }


class Processes:
    """Long-running processes of the deployment, each with a log file; stopped with
    SIGTERM (then SIGKILL) at the end, and their logs' tails kept for a failure."""

    def __init__(self, workdir: Path, env: dict[str, str]) -> None:
        self.workdir = workdir
        self.env = env
        self.procs: dict[str, subprocess.Popen] = {}
        self.logs: dict[str, Path] = {}

    def start(self, name: str, args: list[str], **env: str) -> subprocess.Popen:
        log_path = self.workdir / f"{name}.log"
        with open(log_path, "ab") as log:
            proc = subprocess.Popen(
                args,
                cwd=self.workdir,
                env={**self.env, **env},
                stdout=log,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )
        self.procs[name], self.logs[name] = proc, log_path
        return proc

    def web(self, name: str, python: str) -> str:
        port = free_port()
        proc = self.start(
            name,
            [python, "-m", "studio", "serve", "--host", "127.0.0.1", "--port", str(port)],
        )
        wait_for_port(port, timeout=START_TIMEOUT, proc=proc)
        return f"http://127.0.0.1:{port}"

    def kill(self, name: str) -> None:
        proc = self.procs[name]
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait(timeout=30)

    def alive(self) -> dict[str, int | None]:
        return {name: proc.poll() for name, proc in self.procs.items()}

    def tails(self, lines: int = 40) -> str:
        out = []
        for name, path in self.logs.items():
            text = path.read_text(errors="replace").splitlines()[-lines:]
            out.append(f"--- {name} ({path}) ---\n" + "\n".join(text))
        return "\n".join(out)

    def stop_all(self) -> dict[str, int]:
        """SIGTERM to every live process, then wait: their exit codes by name."""
        for proc in self.procs.values():
            if proc.poll() is None:
                proc.terminate()
        codes = {}
        for name, proc in self.procs.items():
            try:
                codes[name] = proc.wait(timeout=45)
            except subprocess.TimeoutExpired:
                proc.kill()
                codes[name] = proc.wait()
        return codes


def wait_until(condition: Callable[[], Any], *, timeout: float, what: str) -> Any:
    """Poll `condition` until it returns something true; that value."""
    deadline = time.monotonic() + timeout
    while True:
        value = condition()
        if value:
            return value
        if time.monotonic() > deadline:
            raise TimeoutError(f"{what}: not within {timeout:g}s")
        time.sleep(0.2)


def cookies_of(response: httpx.Response) -> dict[str, str]:
    """name -> value of the response's Set-Cookie headers (the cookies are Secure, which a
    client's jar would not send back over the proxy's plain-HTTP side)."""
    found = {}
    for header in response.headers.get_list("set-cookie"):
        name, _, value = header.split(";", 1)[0].partition("=")
        found[name.strip()] = value.strip()
    return found


def sign_in(base_url: str, username: str, password: str) -> str:
    """Sign in through the login form as a browser behind the HTTPS proxy does; the
    `Cookie` header of the session."""
    origin = "https://" + urlsplit(base_url).netloc
    with httpx.Client(base_url=base_url, headers=PROXY_HEADERS, timeout=60) as client:
        page = client.get("/accounts/login/")
        assert page.status_code == 200, page.text[:500]
        csrf = cookies_of(page)["csrftoken"]
        form_token = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', page.text)
        assert form_token, "the login form has no CSRF token"
        answer = client.post(
            "/accounts/login/",
            data={"username": username, "password": password, "csrfmiddlewaretoken": form_token[1]},
            headers={
                "Cookie": f"csrftoken={csrf}",
                "Origin": origin,
                "Referer": f"{origin}/accounts/login/",
            },
        )
    assert answer.status_code == 302, answer.text[:500]
    return f"sessionid={cookies_of(answer)['sessionid']}"
