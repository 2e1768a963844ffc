"""The Dockerfile, read (no Docker engine here; tests/deploy/test_release_boot.py runs the
same steps in a virtualenv): its wheel stage copies every app the wheel packages, and its
runtime stage installs the lock with hashes and the wheel alone, as a non-root user with a
health check on /healthz."""

from __future__ import annotations

import re
import tomllib

from tests.conftest import ROOT

DOCKERFILE = (ROOT / "Dockerfile").read_text()


def _stages() -> list[str]:
    return re.split(r"^FROM ", DOCKERFILE, flags=re.M)[1:]


def test_the_wheel_stage_copies_every_package_the_wheel_holds() -> None:
    pyproject = tomllib.loads((ROOT / "pyproject.toml").read_text())
    packages = {
        name.rstrip("*") for name in pyproject["tool"]["setuptools"]["packages"]["find"]["include"]
    }
    wheel_stage = _stages()[0]

    copied = set(re.findall(r"^COPY (\w+) \./\1$", wheel_stage, flags=re.M))

    assert copied == packages
    assert "pip wheel --no-cache-dir --no-deps" in wheel_stage


def test_the_runtime_stage_installs_the_lock_with_hashes_then_the_wheel_alone() -> None:
    runtime = _stages()[-1]

    lock = runtime.index("--require-hashes -r /tmp/runtime.txt")
    wheel = runtime.index("--no-deps /tmp/dist/agent_studio-*.whl")

    assert lock < wheel
    assert "COPY --from=wheel /dist/" in runtime
    assert "studio collectstatic --noinput" in runtime
    assert re.search(r"^USER studio$", runtime, flags=re.M)
    assert "http://127.0.0.1:8000/healthz" in runtime.split("HEALTHCHECK", 1)[1]
