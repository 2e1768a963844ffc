"""Partial JSON of streamed tool arguments: the studio's incremental parser against
re-parsing the accumulated text after every delta (jiter partial mode, partial-json-parser),
and the bytes the page receives for the argument.

    python -m bench.partial_json [--sizes 1000,10000,100000,1000000] [--delta 16]
                                 [--per-pass 1,8,64]

For each size an argument (nested objects and arrays; strings with escapes and non-ASCII
text) is cut into deltas of 16 characters and fed to each parser; all must agree on the
final value and on sampled intermediate values. One line per size on stdout:

    size=<bytes> studio_s=<s> jiter_s=<s> pjp_s=<s|skipped> speedup_vs_jiter=<x>
        ws_bytes=<bytes> ws_bytes_pass<N>=<bytes> ...

`ws_bytes_pass<N>` is what the page receives for the argument when the model's chunks
reach the run N at a time (N deltas within one pass of the run's event loop: one read of
the model's stream): the `tool-input-delta` events as the run's sink sends them (the
pass's deltas joined into one event with runtime/bus/patches.py's functions, encoded as the
sink encodes them, with ids and seq). `ws_bytes` is the first of `--per-pass`; at 1 every
delta is its own event, which is what every delta cost before deltas of one pass were
joined. partial-json-parser is skipped where its quadratic time, extrapolated from the
smaller sizes, would pass a minute; the jiter re-parse where it would pass `--jiter-limit`
seconds (then `jiter_s=est<seconds>` and `speedup_vs_jiter=est<x>` are quadratic
extrapolations from the largest measured size). Targets: 10x the size costs at most 12x
the time; at 1 MB at least 200x faster than jiter; ws_bytes at most 3x the size once the
deltas of a read go together.
"""

from __future__ import annotations

import argparse
import copy
import json
import random
import sys
import time
from typing import Any


def _django() -> None:
    import os

    import django

    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "studio.settings_test")
    django.setup()


_django()

from agents_core.runtime.bus.patches import join_delta, sendable_delta  # noqa: E402
from agents_core.runtime.run.partial_json import IncrementalJSONParser  # noqa: E402

SKIP_AFTER_S = 60.0
SAMPLES = 40
WORDS = [
    "naïve",
    "café",
    "Zürich",
    "東京",
    "데이터",
    "emoji 😀",
    'say "hi"',
    "back\\slash",
    "tab\there",
    "new\nline",
    "plain",
    "streaming",
    "argument",
    "π≈3.14159",
]


def argument(size: int, rng: random.Random) -> str:
    """A JSON object of about `size` characters."""
    sections: list[dict[str, Any]] = []
    value = {
        "title": "Quarterly report — ünïcode",
        "sections": sections,
        "meta": {"draft": True, "version": 3, "owner": None},
    }
    text = json.dumps(value, ensure_ascii=False)
    while len(text) < size:
        body = " ".join(rng.choice(WORDS) for _ in range(rng.randint(4, 40)))
        sections.append(
            {
                "heading": f"Section {len(sections) + 1}",
                "body": body,
                "tags": [rng.choice(WORDS) for _ in range(3)],
                "scores": [round(rng.random() * 100, 3), rng.randint(-50, 50)],
                "nested": {"ok": rng.random() < 0.5, "ratio": 0.25},
            }
        )
        text = json.dumps(value, ensure_ascii=False)
    return text


def deltas_of(text: str, size: int) -> list[str]:
    return [text[i : i + size] for i in range(0, len(text), size)]


def run_studio(deltas: list[str]) -> tuple[float, Any]:
    parser = IncrementalJSONParser()
    started = time.perf_counter()
    for delta in deltas:
        parser.feed(delta)
    elapsed = time.perf_counter() - started
    return elapsed, parser.finish()


def run_reparse(deltas: list[str], parse: Any, samples: set[int]) -> tuple[float, dict[int, Any]]:
    accumulated = ""
    seen: dict[int, Any] = {}
    started = time.perf_counter()
    for index, delta in enumerate(deltas):
        accumulated += delta
        try:
            value = parse(accumulated)
        except Exception:  # noqa: BLE001 - a prefix a parser refuses (an unfinished literal)
            value = None
        if index in samples:
            seen[index] = value
    return time.perf_counter() - started, seen


def studio_samples(deltas: list[str], samples: set[int]) -> dict[int, Any]:
    parser = IncrementalJSONParser()
    seen = {}
    for index, delta in enumerate(deltas):
        parser.feed(delta)
        if index in samples:
            seen[index] = copy.deepcopy(parser.value())
    return seen


def _trimmed(value: Any) -> Any:
    if isinstance(value, str):
        return value.rstrip()
    if isinstance(value, list):
        return [_trimmed(item) for item in value]
    if isinstance(value, dict):
        return {key: _trimmed(item) for key, item in value.items()}
    return value


def comparable(deltas: list[str], index: int) -> bool:
    """Sample points not inside a number or literal, where parsers legitimately differ."""
    prefix = "".join(deltas[max(0, index - 2) : index + 1]).rstrip()
    return prefix[-1:] not in "0123456789.eE+-truefalsn"


def ws_bytes(deltas: list[str], per_pass: int) -> int:
    """Bytes of the tool-input-delta events the page receives when `per_pass` deltas reach
    the run in each pass of its event loop: joined as the sink joins them
    (runtime/bus/events.py), encoded as it encodes them, with their ids and seq."""
    parser = IncrementalJSONParser()
    total, seq = 0, 1000
    base = {
        "type": "tool-input-delta",
        "runId": "3f2b8c1e-6a4d-4f7a-9c0e-2d5b7a9e1f30",
        "toolCallId": "call_8d3f1a2b9c4e_0",
        "toolName": "write_report",
    }
    for start in range(0, len(deltas), per_pass):
        held: dict[str, Any] | None = None
        for delta in deltas[start : start + per_pass]:
            event = {**base, "argsTextDelta": delta, "patches": parser.feed(delta)}
            if held is None or not join_delta(held, event):
                assert held is None, "one call's deltas always join"
                held = event
        assert held is not None
        seq += 1
        sent = sendable_delta(held)
        sent["seq"] = seq
        total += len(json.dumps(sent, default=str).encode())
    return total


def main() -> None:
    options = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    options.add_argument("--sizes", default="1000,10000,100000,1000000")
    options.add_argument("--delta", type=int, default=16)
    options.add_argument(
        "--per-pass",
        default="1,8,64",
        help="deltas that reach the run within one pass of its event loop, for ws_bytes",
    )
    options.add_argument(
        "--jiter-limit",
        type=float,
        default=900.0,
        help="estimate (print est<seconds>) instead of running the jiter "
        "re-parse when it would take longer than this",
    )
    args = options.parse_args()
    import jiter
    import partial_json_parser

    def jiter_parse(text: str) -> Any:
        return jiter.from_json(text.encode(), partial_mode="trailing-strings")

    rng = random.Random(4)
    pjp_rate: float | None = None  # seconds per delta per character, from measured sizes
    jiter_rate: float | None = None
    passes = [int(n) for n in args.per_pass.split(",")]
    print(
        f"# deltas of {args.delta} characters; ws_bytes_pass<N>: N deltas per loop pass",
        file=sys.stderr,
    )
    previous: tuple[int, float] | None = None
    for size in [int(s) for s in args.sizes.split(",")]:
        text = argument(size, rng)
        deltas = deltas_of(text, args.delta)
        expected = json.loads(text)
        samples = set(rng.sample(range(len(deltas)), min(SAMPLES, len(deltas))))
        samples = {i for i in samples if comparable(deltas, i)}

        # Best of three: the studio's run is short enough that timer noise matters.
        studio_s, final = min(run_studio(deltas) for _ in range(3))
        assert final == expected, "studio parser: wrong final value"
        mine = studio_samples(deltas, samples)
        jiter_predicted = jiter_rate * len(deltas) * len(text) if jiter_rate else 0.0
        if jiter_predicted > args.jiter_limit:
            # Quadratic: on a loaded machine 1 MB can take an hour. Print the estimate from
            # the measured sizes instead (marked as such).
            jiter_s, jiter_shown, mismatches = jiter_predicted, f"est{jiter_predicted:.0f}", 0
        else:
            jiter_s, jiter_seen = run_reparse(deltas, jiter_parse, samples)
            jiter_rate = jiter_s / (len(deltas) * len(text))
            jiter_shown = f"{jiter_s:.3f}"
            assert jiter_parse(text) == expected
            mismatches = sum(1 for i in samples if mine[i] != jiter_seen[i])
        pjp_mismatches: int | str = "-"

        predicted = pjp_rate * len(deltas) * len(text) if pjp_rate else 0.0
        if predicted > SKIP_AFTER_S:
            pjp = "skipped"
        else:
            pjp_s, pjp_seen = run_reparse(deltas, partial_json_parser.loads, samples)
            assert partial_json_parser.loads(text) == expected
            pjp_rate = pjp_s / (len(deltas) * len(text))
            # partial-json-parser trims trailing spaces of an unfinished string: compare
            # with that difference forgiven, count the rest.
            pjp_mismatches = sum(1 for i in samples if _trimmed(mine[i]) != _trimmed(pjp_seen[i]))
            pjp = f"{pjp_s:.3f}"
        size_bytes = len(text.encode())
        wires = {n: ws_bytes(deltas, n) for n in passes}
        wire = wires[passes[0]]
        speedup = (
            f"{jiter_s / studio_s:.1f}"
            if not jiter_shown.startswith("est")
            else (f"est{jiter_s / studio_s:.0f}")
        )
        print(
            f"size={size_bytes} studio_s={studio_s:.4f} jiter_s={jiter_shown} pjp_s={pjp} "
            f"speedup_vs_jiter={speedup} ws_bytes={wire} "
            + " ".join(f"ws_bytes_pass{n}={b}" for n, b in wires.items()),
            flush=True,
        )
        growth = ""
        if previous is not None:
            growth = (
                f" time x{studio_s / previous[1]:.1f} for size x{size_bytes / previous[0]:.1f};"
            )
        print(
            f"#  {len(deltas)} deltas;{growth} sampled intermediate values compared: "
            f"{len(samples)}, disagreements with jiter: {mismatches}, with "
            f"partial-json-parser: {pjp_mismatches}; ws_bytes/size "
            + ", ".join(f"{b / size_bytes:.2f} at {n} per pass" for n, b in wires.items()),
            file=sys.stderr,
            flush=True,
        )
        previous = (size_bytes, studio_s)


if __name__ == "__main__":
    main()
