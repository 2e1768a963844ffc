"""The release's version is one number: pyproject.toml's, the API schema's and the top
entry of CHANGELOG.md, which carries the upgrade notes an operator reads."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

from django.conf import settings

ROOT = Path(__file__).resolve().parents[2]
VERSION = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["version"]


def test_the_api_schema_reports_the_package_version() -> None:
    assert settings.SPECTACULAR_SETTINGS["VERSION"] == VERSION


def test_the_changelog_starts_with_this_version_and_its_upgrade_notes() -> None:
    changelog = (ROOT / "CHANGELOG.md").read_text()
    entries = re.split(r"^## ", changelog, flags=re.MULTILINE)[1:]
    assert entries, "CHANGELOG.md has no release entry"
    assert entries[0].split()[0] == VERSION
    assert "### Upgrade notes" in entries[0]
