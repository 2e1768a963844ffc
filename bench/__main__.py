"""Run every benchmark module in bench/ (each one's `main()`), one after the other."""

from __future__ import annotations

import importlib
import pkgutil
import sys
import time
from pathlib import Path


def main() -> int:
    names = sorted(
        info.name
        for info in pkgutil.iter_modules([str(Path(__file__).parent)])
        if not info.name.startswith("_")
    )
    selected = [name for name in names if not sys.argv[1:] or name in sys.argv[1:]]
    sys.argv = sys.argv[:1]  # each bench parses its own (empty) arguments
    failed = []
    for name in selected:
        module = importlib.import_module(f"bench.{name}")
        entry = getattr(module, "main", None)
        if entry is None:
            continue
        print(f"\n=== bench.{name} ===", flush=True)
        started = time.perf_counter()
        try:
            entry()
        except Exception as exc:  # noqa: BLE001 - one broken bench must not hide the others
            failed.append(name)
            print(f"bench.{name} failed: {type(exc).__name__}: {exc}", flush=True)
        print(f"(bench.{name}: {time.perf_counter() - started:.1f} s)", flush=True)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
