"""The page modules that need no browser (the chat's conversation model, formatting, the
editor's merge and diff, the schema helpers), tested with Node's own test runner on the
very files the pages load: one pytest test per tests/frontend/js/*.test.mjs file, failing
with Node's report when a test in it fails. Skipped where Node is not installed."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest

HERE = Path(__file__).parent / "js"
NODE = shutil.which("node")
FILES = sorted(HERE.glob("*.test.mjs"))


def test_every_js_unit_file_is_collected():
    assert FILES, f"no *.test.mjs under {HERE}"


@pytest.mark.skipif(NODE is None, reason="Node.js is not installed")
@pytest.mark.parametrize("path", FILES, ids=[path.name for path in FILES])
def test_js_units(path: Path):
    result = subprocess.run(
        [NODE, "--test", "--test-reporter=spec", str(path)],
        cwd=HERE,
        capture_output=True,
        text=True,
        timeout=90,
        check=False,
    )
    report = result.stdout + result.stderr
    assert result.returncode == 0, report
    counts = dict(re.findall(r"^ℹ (tests|pass|fail) (\d+)$", report, re.MULTILINE))
    assert int(counts.get("tests", 0)) > 0 and counts.get("fail") == "0", report
