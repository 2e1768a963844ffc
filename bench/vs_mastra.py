"""The studio side by side with Mastra on the same workload, one after the other.

    python -m bench.vs_mastra [--streams 1,10,100] [--seconds 8] [--rate 30]
                              [--only mastra|studio] [--parts streaming,tools,partial_json]

Mastra: installs Node 22 and Mastra (@mastra/core, its server, memory on PostgreSQL) from
the npm registry into bench/.mastra/ with the machine's npm (bench/_mastra.py; a second
run reuses it), then runs Mastra's own server (@mastra/deployer's Hono server, the one
`mastra start` serves, SSE) with one agent whose model is a stand-in yielding the chunks
of the studio's offline benchmark mode (bench/mastra/standin.mjs): `rate` deltas a second
per chat for `seconds`, half text and half the arguments of a `bench_sink` call, each
stamped with its index and the time it was yielded; then the tool runs and a second model
call answers "done.". Two variants: no storage, and Mastra's memory on PostgreSQL
(@mastra/memory + @mastra/pg, in a database the bench makes anew each run). N clients in
this process open N SSE streams at once.

Studio: bench.streaming's measurement of the same chats over websockets, with the run
executors `inline` (runs in Daphne) and `worker` (runs in `manage.py execute_runs`
processes), one after the other and never while Mastra runs.

Rows, per N (`--streams`):
- p99 and p50 latency, yield -> client: client receive time - the stamp, per delta;
- CPU per delta, all in: the server processes' CPU (/proc/<pid>/stat) over the phase per
  delta, minus the model stand-in's own CPU per delta (measured alone at the phase's pace
  and concurrency: bench/mastra/micro.mjs for Mastra's, the offline provider and litellm's
  wrapper over it for the studio's, as bench.streaming measures them);
- CPU per run: the same chats with 2 deltas each, CPU per chat;
- lost deltas: yielded but never received.
Then, once: a trivial tool (`unit_convert`) called in-process through the framework
(Mastra `tool.execute` with zod validation; the studio's `run_tool`, bench.tool_overhead)
and over HTTP on 127.0.0.1 (Mastra's `POST /api/tools/unit_convert/execute`; the studio's
`POST /api/tools/unit_convert/execute` with token auth and a ToolRun row); and showing a
tool argument of the largest `--partial-sizes` live: the AI SDK's `parsePartialJson` on the
accumulated text after each 16-character delta (what an AI SDK page does; Mastra sends
only the argument text) against the studio's incremental parser (bench.partial_json).
Where the quadratic re-parse would pass `--partial-limit` seconds it is not run: the
figure is extrapolated from the largest size measured and marked `~`/`est`.

The table has one column per side (Mastra no storage, Mastra PG memory, studio inline,
studio workers) and the ratios studio/Mastra: against Mastra with PostgreSQL memory for
the streaming rows (both sides then persist every run in PostgreSQL), against Mastra's
one figure for the tool rows. Then machine-readable lines, one per row:

    metric=<> streams=<N|-> mastra=<> mastra_pg=<> studio_inline=<> studio_workers=<>
    inline_over_mastra=<> inline_over_mastra_pg=<> workers_over_mastra=<>
    workers_over_mastra_pg=<>

(`-` where not measured; `est<value>` for an extrapolation). stderr has the details per
phase. Bounded: every phase and install has a time limit; the total time is printed; a
part that fails is reported and the others still run (the bench never fails the build).
"""

from __future__ import annotations

import argparse
import datetime
import math
import os
import random
import signal
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from bench import _mastra, streaming, tool_overhead

COLUMNS = {
    "mastra": "Mastra (no storage)",
    "mastra_pg": "Mastra (PG memory)",
    "inline": "studio inline",
    "workers": "studio workers",
}
ROWS = {
    "p99_ms": "p99 latency, yield -> client (ms)",
    "p50_ms": "p50 latency (ms)",
    "all_in_us_per_delta": "CPU per delta, all in, stand-in out (us)",
    "ms_per_run": "CPU per run (ms)",
    "lost": "lost deltas",
    "tool_call_us": "trivial tool, in-process call (us)",
    "tool_http_ms": "trivial tool over HTTP, 127.0.0.1 (ms)",
    "partial_json_s": "tool argument shown live (s)",
}
DEFAULT_PG = "postgres://postgres@127.0.0.1:5432/bench_vs_mastra"


class Table:
    """Cells by (metric, N) and column; a cell is (value, estimated)."""

    def __init__(self) -> None:
        self.cells: dict[tuple[str, str], dict[str, tuple[float, bool]]] = {}
        self.notes: dict[str, str] = {}

    def put(self, metric: str, n: str, column: str, value: float, estimated: bool = False) -> None:
        self.cells.setdefault((metric, n), {})[column] = (value, estimated)

    def ratio(self, row: dict[str, tuple[float, bool]], column: str, base: str) -> str:
        if column not in row or base not in row:
            return "-"
        value, estimated = row[column]
        reference, reference_estimated = row[base]
        if reference == 0 or math.isnan(value) or math.isnan(reference):
            return "-"
        mark = "est" if estimated or reference_estimated else ""
        return mark + _ratio(value / reference)

    def print(self) -> None:
        order = list(ROWS)
        keys = sorted(self.cells, key=lambda key: (order.index(key[0]), _n_order(key[1])))
        width = 42
        head = "".join(f"{title:>21}" for title in COLUMNS.values())
        print(f"\n{'metric':<{width}}{'N':>5}{head}{'inline/Mastra':>15}{'workers/Mastra':>16}")
        for metric, n in keys:
            row = self.cells[(metric, n)]
            cells = "".join(f"{_cell(row.get(column)):>21}" for column in COLUMNS)
            base = "mastra_pg" if n != "-" and "mastra_pg" in row else "mastra"
            ratios = f"{self.ratio(row, 'inline', base):>15}{self.ratio(row, 'workers', base):>16}"
            print(f"{ROWS[metric]:<{width}}{n:>5}{cells}{ratios}")
        print(
            "  ratios: studio / Mastra with PostgreSQL memory in the rows per N (both sides "
            "then persist every run in PostgreSQL), / Mastra's one figure in the others"
        )
        for note in self.notes.values():
            print(f"  {note}")
        print()
        for metric, n in keys:
            row = self.cells[(metric, n)]
            values = " ".join(
                f"{name}={_machine(row.get(column))}"
                for column, name in zip(
                    COLUMNS, ("mastra", "mastra_pg", "studio_inline", "studio_workers"), strict=True
                )
            )
            ratios = " ".join(
                f"{side}_over_{base}={self.ratio(row, column, base)}"
                for column, side in (("inline", "inline"), ("workers", "workers"))
                for base in ("mastra", "mastra_pg")
            )
            print(f"metric={metric} streams={n} {values} {ratios}", flush=True)


def _ratio(ratio: float) -> str:
    if ratio >= 10:
        return f"{ratio:.1f}"
    return f"{ratio:.2f}" if ratio >= 0.1 else f"{ratio:.2g}"


def _n_order(n: str) -> int:
    return int(n) if n.isdigit() else -1


def _number(value: float) -> str:
    if isinstance(value, int):
        return f"{value:,}"
    if math.isnan(value):
        return "nan"
    if abs(value) >= 100:
        return f"{value:,.0f}"
    return f"{value:.1f}" if abs(value) >= 10 else f"{value:.2f}"


def _cell(cell: tuple[float, bool] | None) -> str:
    return "-" if cell is None else ("~" if cell[1] else "") + _number(cell[0])


def _machine(cell: tuple[float, bool] | None) -> str:
    return "-" if cell is None else ("est" if cell[1] else "") + f"{cell[0]:.4g}"


def _streaming_line(table: Table, column: str, line: dict[str, Any], model_us: float) -> None:
    n, result = str(line["streams"]), line["result"]
    table.put("p99_ms", n, column, result["p99"])
    table.put("p50_ms", n, column, result["p50"])
    table.put("all_in_us_per_delta", n, column, line["all_in_us"])
    table.put("ms_per_run", n, column, line["ms_per_run"])
    table.put("lost", n, column, int(result["lost"]))
    print(
        f"# {COLUMNS[column]} streams={n}: {result['deltas']} deltas in {result['wall']:.1f} s, "
        f"delivered {result['delivered']} events, lost {result['lost']}, errors "
        f"{len(result['errors'])} {result['errors'][:1]}; server CPU {result['cpu']:.2f} s "
        f"({result['cpu'] / result['wall'] * 100:.0f}% of a core), the clients "
        f"{result['clients_cpu'] / result['wall'] * 100:.0f}%; model stand-in "
        f"{model_us:.0f} us per delta taken out; p99 ms second by second "
        f"{result['p99_by_second']}",
        file=sys.stderr,
        flush=True,
    )


def _mastra_streaming(args: argparse.Namespace, node: Path, table: Table) -> None:
    for column, pg_url in (("mastra", None), ("mastra_pg", args.pg)):
        for line in _mastra.measure_variant(
            node=node, counts=args.counts, rate=args.rate, seconds=args.seconds, pg_url=pg_url
        ):
            _streaming_line(table, column, line, line["standin_us"])


def _studio_streaming(args: argparse.Namespace, studio: tuple[Any, str], table: Table) -> None:
    user, cookie = studio
    for column, executor in (("inline", "inline"), ("workers", "worker")):
        for line in streaming.measure_executor(
            executor=executor,
            counts=args.counts,
            rate=args.rate,
            seconds=args.seconds,
            workers=args.workers,
            stagger=0.0,
            user=user,
            cookie=cookie,
            model_base=None,
        ):
            _streaming_line(table, column, line, line["model_us"])


def _mastra_tools(args: argparse.Namespace, node: Path, table: Table) -> None:
    measured = _mastra.micro(node, "tool", f"--repeat={args.tool_repeat}")
    if not measured["rejects_bad_input"]:
        raise RuntimeError("Mastra's tool.execute accepted bad input: it is not validating")
    table.put("tool_call_us", "-", "mastra", measured["us_per_call"])
    table.put("tool_http_ms", "-", "mastra", _mastra.tool_over_http(node, args.tool_repeat) * 1e3)


def _studio_tools(args: argparse.Namespace, table: Table) -> None:
    tool, user, token = tool_overhead.trivial_tool()
    try:
        table.put("tool_call_us", "-", "inline", tool_overhead.run_tool_seconds(tool) * 1e6)
        http = tool_overhead.over_http(token, args.tool_repeat)
        table.put("tool_http_ms", "-", "inline", http * 1e3)
    finally:
        tool_overhead.trivial_tool_cleanup(user)
    table.notes["tools"] = (
        "tool rows: Mastra tool.execute (zod) and its tools API; the studio's run_tool and "
        "its execute API (token auth, a ToolRun row), in the inline column"
    )


def _partial_json(args: argparse.Namespace, node: Path | None, table: Table) -> None:
    # Imported here, once bench.streaming.setup() has chosen the bench's Django settings:
    # bench.partial_json sets Django up when it is imported.
    from bench import partial_json

    rng = random.Random(4)  # the texts bench.partial_json makes for the same sizes
    per_char: float | None = None  # Mastra's seconds per delta per character
    for size in args.partial_sizes:
        text = partial_json.argument(size, rng)
        deltas = partial_json.deltas_of(text, 16)
        work = len(deltas) * len(text)
        table.cells.pop(("partial_json_s", "-"), None)  # the row shows the largest size
        if args.studio:
            studio_s = min(partial_json.run_studio(deltas)[0] for _ in range(3))
            table.put("partial_json_s", "-", "inline", studio_s)
        if node is not None:
            predicted = per_char * work if per_char else 0.0
            if predicted > args.partial_limit:
                table.put("partial_json_s", "-", "mastra", predicted, estimated=True)
            else:
                measured = _parse_partial_in_node(node, text, timeout=10 * args.partial_limit)
                per_char = measured / work
                table.put("partial_json_s", "-", "mastra", measured)
        row = table.cells.get(("partial_json_s", "-"), {})
        print(
            f"partial_json size={len(text.encode())} deltas={len(deltas)} "
            f"mastra_s={_machine(row.get('mastra'))} studio_s={_machine(row.get('inline'))}",
            flush=True,
        )
        table.notes["partial_json"] = (
            f"tool argument shown live: {len(text.encode()):,} bytes in 16-character deltas; "
            f"Mastra: the AI SDK's parsePartialJson after each delta (~: extrapolated from "
            f"the largest size measured, quadratic, past {args.partial_limit:g} s); the "
            f"studio: its incremental parser"
        )


def _parse_partial_in_node(node: Path, text: str, timeout: float) -> float:
    with tempfile.NamedTemporaryFile("w", suffix=".json", encoding="utf-8") as handle:
        handle.write(text)
        handle.flush()
        measured = _mastra.micro(
            node, "partial", f"--file={handle.name}", "--delta=16", timeout=max(600, timeout)
        )
    if not measured["agrees"]:
        raise RuntimeError("parsePartialJson's last value differs from the JSON text")
    return measured["seconds"]


def _part(name: str, run: Callable[[], None]) -> None:
    started = time.monotonic()
    print(f"# {name} ...", file=sys.stderr, flush=True)
    try:
        run()
    except Exception as exc:  # noqa: BLE001 - one failed part must not hide the others
        print(f"# {name} failed: {type(exc).__name__}: {exc}", flush=True)
    print(f"# {name}: {time.monotonic() - started:.0f} s", file=sys.stderr, flush=True)


def _arguments() -> argparse.Namespace:
    options = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    options.add_argument("--streams", default="1,10,100", help="chats at once, comma-separated")
    options.add_argument("--seconds", type=float, default=8.0, help="length of a chat")
    options.add_argument("--rate", type=float, default=30.0, help="deltas per second per chat")
    options.add_argument("--only", choices=["mastra", "studio"], help="run one side only")
    options.add_argument(
        "--parts",
        default="streaming,tools,partial_json",
        help="what to measure: streaming, tools, partial_json (comma-separated)",
    )
    options.add_argument(
        "--workers", type=int, default=os.cpu_count() or 2, help="the studio's run workers"
    )
    options.add_argument("--pg", default=DEFAULT_PG, help="Mastra's memory database (remade)")
    options.add_argument("--tool-repeat", type=int, default=200, help="calls per tool figure")
    options.add_argument("--partial-sizes", default="1000,10000,100000,1000000")
    options.add_argument(
        "--partial-limit",
        type=float,
        default=60.0,
        help="extrapolate parsePartialJson past this many seconds instead of running it",
    )
    args = options.parse_args()
    args.counts = [int(n) for n in args.streams.split(",")]
    args.partial_sizes = [int(n) for n in args.partial_sizes.split(",")]
    args.parts = set(args.parts.split(","))
    unknown = args.parts - {"streaming", "tools", "partial_json"}
    if unknown:
        options.error(f"unknown parts: {', '.join(sorted(unknown))}")
    args.mastra = args.only in (None, "mastra")
    args.studio = args.only in (None, "studio")
    return args


def main() -> None:
    args = _arguments()
    # Stopped by SIGTERM, it still stops the servers it started (the finally blocks).
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    started = time.monotonic()
    print(
        f"# {datetime.datetime.now(datetime.UTC):%Y-%m-%d %H:%M} UTC, load average "
        f"{' '.join(f'{load:.2f}' for load in os.getloadavg())}, {os.cpu_count()} cores",
        flush=True,
    )
    print(
        f"# workload: N chats at once (N = {args.streams}), {args.rate:g} deltas/s each for "
        f"{args.seconds:g} s ({int(args.rate * args.seconds)} deltas), half text and half "
        f"tool-call arguments, then the tool and a second model call",
        flush=True,
    )
    table = Table()
    node: Path | None = None
    studio: tuple[Any, str] | None = None

    def install() -> None:
        nonlocal node
        node = _mastra.install()

    def setup() -> None:
        nonlocal studio
        studio = streaming.setup()

    if args.mastra:
        _part("Mastra install", install)
    _part("studio setup", setup)  # also bench.partial_json's Django settings
    if "streaming" in args.parts:
        if node is not None:
            _part("Mastra streaming", lambda: _mastra_streaming(args, node, table))
        if args.studio and studio is not None:
            _part("studio streaming", lambda: _studio_streaming(args, studio, table))
    if "tools" in args.parts:
        if node is not None:
            _part("Mastra tools", lambda: _mastra_tools(args, node, table))
        if args.studio and studio is not None:
            _part("studio tools", lambda: _studio_tools(args, table))
    if "partial_json" in args.parts and studio is not None:
        _part("partial JSON", lambda: _partial_json(args, node, table))
    table.print()
    print(f"# bench.vs_mastra took {time.monotonic() - started:.0f} s", flush=True)


if __name__ == "__main__":
    main()
