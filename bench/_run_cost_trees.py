"""bench.run_cost's side by side with a baseline commit: its in-process part run by each
tree's code in a process of its own, alternated, and the ratios of the medians."""

from __future__ import annotations

import os
import re
import statistics
import subprocess
import sys
from pathlib import Path

FIGURE = re.compile(r"(\w+)=([-\w.]+)")


def _inline_in_child(root: Path, runs: int) -> dict[str, float]:
    """The in-process part run by the code at `root` in a process of its own: its
    `part=inline_run` line's figures."""
    env = {**os.environ, "PYTHONPATH": str(root)}
    command = [sys.executable, "-m", "bench.run_cost", "--parts", "inline_run", "--runs", str(runs)]
    done = subprocess.run(
        command, cwd=root, env=env, capture_output=True, text=True, timeout=900, check=False
    )
    if done.returncode != 0:
        print(done.stderr[-3000:], file=sys.stderr, flush=True)
        done.check_returncode()
    output = done.stdout
    line = next(line for line in output.splitlines() if line.startswith("part=inline_run"))
    return {key: float(value) for key, value in FIGURE.findall(line) if key != "part"}


def ratio(now: float, before: float) -> str:
    return f"{now / before:.3f}" if before and before == before else "nan"


def inline_side_by_side(trees: list[tuple[str, Path]], runs: int, rounds: int) -> None:
    """Each tree's in-process part `rounds` times, in alternating order; the medians."""
    figures: dict[str, list[dict[str, float]]] = {label: [] for label, _ in trees}
    for number in range(rounds):
        for label, root in trees if number % 2 == 0 else trees[::-1]:
            found = _inline_in_child(root, runs)
            figures[label].append(found)
            shown = " ".join(f"{key}={value:g}" for key, value in found.items())
            print(f"part=inline_run tree={label} round={number + 1} {shown}", flush=True)
    medians = {
        label: {key: statistics.median(f[key] for f in found) for key in found[0]}
        for label, found in figures.items()
    }
    (base_label, _), (current_label, _) = trees
    base, current = medians[base_label], medians[current_label]
    print(
        "ratio part=inline_run current/baseline "
        + " ".join(
            f"{key}={ratio(current[key], base[key])}"
            for key in ("cpu_ms_per_run", "queries_per_run", "studio_ms_per_run")
        )
        + f" (medians of {rounds}: baseline cpu_ms_per_run={base['cpu_ms_per_run']:.1f} "
        f"queries_per_run={base['queries_per_run']:.1f}; current "
        f"cpu_ms_per_run={current['cpu_ms_per_run']:.1f} "
        f"queries_per_run={current['queries_per_run']:.1f}; "
        f"load average {os.getloadavg()[0]:.1f})",
        flush=True,
    )
