"""Every shell command the README shows works verbatim from a fresh shell.

`make run` is started as written (with PORT and STUDIO_DATA_DIR in its environment, so it
does not take the checkout's port or data), and every other command of the README's `sh`
blocks then runs in a fresh `bash` against that studio's data. `make test` is what runs
this test, so it is the one command not run here.
"""

from __future__ import annotations

import os
import re
import signal
import subprocess

import httpx
import pytest

from tests.conftest import ROOT, free_port, wait_for_port

README = ROOT / "README.md"
NOT_RUN_HERE = re.compile(r"(^|\s)make test\b")


def readme_commands() -> list[str]:
    blocks = re.findall(r"```sh\n(.*?)```", README.read_text(), flags=re.S)
    commands = []
    for block in blocks:
        for line in block.splitlines():
            command = re.split(r"\s{2,}#", line)[0].strip()
            if command and not command.startswith("#"):
                commands.append(command)
    return commands


def fresh_shell_env(data_dir) -> dict[str, str]:
    """What a new terminal has: none of the test run's settings, only PATH and home."""
    keep = ("PATH", "HOME", "LANG", "USER", "TERM")
    env = {key: os.environ[key] for key in keep if key in os.environ}
    env["STUDIO_DATA_DIR"] = str(data_dir)
    return env


def test_the_readme_shows_commands_and_make_run_is_one_of_them():
    commands = readme_commands()
    assert "make run" in commands
    assert any(NOT_RUN_HERE.search(c) for c in commands)
    assert len([c for c in commands if not c.startswith("make ")]) >= 1


@pytest.mark.slow
@pytest.mark.timeout(300)
def test_every_readme_command_works_from_a_fresh_shell(embedded_data_dir):
    tmp_path = embedded_data_dir
    port = free_port()
    env = fresh_shell_env(tmp_path)
    log = open(tmp_path / "make-run.log", "wb")  # noqa: SIM115 - closed below
    studio = subprocess.Popen(
        ["bash", "-c", "make run"],
        cwd=ROOT,
        env={**env, "PORT": str(port)},
        stdout=log,
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )
    try:
        wait_for_port(port, timeout=240, proc=studio)
        assert httpx.get(f"http://127.0.0.1:{port}/").status_code == 302
        others = [c for c in readme_commands() if c != "make run" and not NOT_RUN_HERE.search(c)]
        for command in others:
            done = subprocess.run(
                ["bash", "-c", command],
                cwd=ROOT,
                env=env,
                capture_output=True,
                text=True,
                timeout=120,
            )
            assert done.returncode == 0, f"{command}\n{done.stdout}\n{done.stderr}"
            assert "Traceback" not in done.stderr, command
    finally:
        os.killpg(studio.pid, signal.SIGTERM)
        try:
            studio.wait(timeout=20)
        except subprocess.TimeoutExpired:
            os.killpg(studio.pid, signal.SIGKILL)
            studio.wait()
        log.close()
