"""The wheel a deployment installs: every app of INSTALLED_APPS with its migrations,
templates and static files, the data files read at run time, and the `studio` script."""

from __future__ import annotations

import subprocess
import zipfile
from pathlib import Path

import pytest
from django.conf import settings

from tests.deploy.release import wheel_build

ROOT = Path(__file__).resolve().parents[2]
# Files beside the code that the studio reads at run time, by glob under each app.
DATA_GLOBS = ("templates/**/*", "static/**/*", "migrations/*.py", "connectors/specs/*/*.yaml")


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return wheel_build(tmp_path_factory.mktemp("wheel"))


@pytest.fixture(scope="module")
def wheel_names(wheel: Path) -> set[str]:
    with zipfile.ZipFile(wheel) as archive:
        return set(archive.namelist())


def _local_apps() -> list[str]:
    return [app for app in settings.INSTALLED_APPS if (ROOT / app / "apps.py").exists()]


def test_the_project_has_the_apps_the_wheel_is_checked_for() -> None:
    assert {"agents_core", "tools_app", "providers", "traces", "evals", "frontend"} <= set(
        _local_apps()
    )


def test_the_wheel_holds_every_local_app_with_its_data_files(wheel_names: set[str]) -> None:
    missing = []
    for app in [*_local_apps(), "studio"]:
        tracked = subprocess.run(
            ["git", "ls-files", app], cwd=ROOT, check=True, capture_output=True, text=True
        ).stdout.split()
        for name in tracked:
            path = Path(name)
            wanted = path.suffix == ".py" or any(
                path.match(f"{app}/{pattern}") or path.match(f"{app}/*/{pattern}")
                for pattern in DATA_GLOBS
            )
            if wanted and name not in wheel_names:
                missing.append(name)
    assert missing == []


def test_the_wheel_holds_templates_static_files_and_demo_data(wheel_names: set[str]) -> None:
    assert "frontend/templates/frontend/base.html" in wheel_names
    assert any(n.startswith("frontend/static/js/lib/") for n in wheel_names)
    assert "evals/demo/travel_desk.json" in wheel_names
    assert "tools_app/connectors/specs/jira/openapi.yaml" in wheel_names
    assert not any(n.startswith(("tests/", "bench/")) for n in wheel_names)


def test_the_wheel_installs_the_studio_console_script(wheel: Path) -> None:
    with zipfile.ZipFile(wheel) as archive:
        (name,) = [n for n in archive.namelist() if n.endswith(".dist-info/entry_points.txt")]
        entry_points = archive.read(name).decode()
    assert "[console_scripts]\nstudio = studio.cli:main" in entry_points
