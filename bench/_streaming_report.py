"""The lines bench.streaming prints: one on stdout per executor and N, its details (CPU by
process, start times, p99 second by second, the model side's share of the cores) on
stderr."""

from __future__ import annotations

import os
import sys
from typing import Any

from bench._streaming_clients import percentile


def marginal_by_process(result: dict[str, Any], fixed: dict[str, Any]) -> list[int]:
    """What one more delta cost each process (the long phase minus the short one)."""
    extra = max(1, result["deltas"] - fixed["deltas"])
    return [
        round((long - short) * 1e6 / extra)
        for long, short in zip(result["per_process"], fixed["per_process"], strict=True)
    ]


def print_line(executor: str, line: dict[str, Any], rate: float, layer: str) -> None:
    result, fixed, streams = line["result"], line["fixed"], line["streams"]
    studio_us, http_us, litellm_us = line["studio_us"], line["http_us"], line["litellm_us"]
    print(
        f"executor={executor} streams={streams} rate={rate:g} "
        f"delivered={result['delivered']} lost={result['lost']} "
        f"p50_ms={result['p50']:.1f} p99_ms={result['p99']:.1f} "
        f"studio_us_per_delta={studio_us:.0f} "
        f"litellm_us_per_delta={http_us:.0f} "
        f"fast_us_per_delta={line['fast_us']:.0f} "
        f"litellm_over_fast={http_us / line['fast_us']:.2f} "
        f"litellm_offline_us_per_delta={litellm_us:.0f} "
        f"provider_us_per_delta={line['provider_us']:.0f} "
        f"studio_over_litellm={studio_us / http_us:.2f} "
        f"studio_over_litellm_offline={studio_us / litellm_us:.2f} "
        f"studio_ms_per_run={line['ms_per_run']:.1f} "
        f"all_in_us_per_delta={line['all_in_us']:.0f} "
        f"litellm_unpaced_us_per_delta={line['unpaced_us']:.0f} "
        f"studio_over_litellm_unpaced={studio_us / line['unpaced_us']:.2f} "
        f"fast_unpaced_us_per_delta={line['fast_unpaced_us']:.0f} "
        f"unstored={result.get('unstored', 0)} load_avg={os.getloadavg()[0]:.1f}",
        flush=True,
    )
    print(
        f"#  layer={layer}; {result['deltas']} deltas in "
        f"{result['wall']:.1f} s; studio CPU {result['cpu']:.1f} s "
        f"({result['cpu'] / result['wall'] * 100:.0f}% of a core; by process "
        f"{[round(c / result['wall'] * 100) for c in result['per_process']]}%; "
        f"the clients {result['clients_cpu'] / result['wall'] * 100:.0f}%); "
        f"marginal us per delta by process (Daphne first, litellm and the "
        f"provider in the workers' or inline Daphne's) "
        f"{marginal_by_process(result, fixed)}; "
        f"sequence gaps "
        f"seen by clients: {result['gaps']}; run errors: "
        f"{len(result['errors'])} {result['errors'][:1]}; from a message to its "
        f"run-start p50/max ms {percentile(result['start_ms'], 0.5):.0f}/"
        f"{max(result['start_ms'], default=float('nan')):.0f}; p99 ms second by "
        f"second: {result['p99_by_second']}; litellm and the provider alone "
        f"need {streams * rate * line['model_us'] / 1e6:.2f} of the machine's "
        f"{os.cpu_count()} cores at this rate; litellm's assembly of the whole "
        f"response, which the run loop skips, would add {line['assembly_us']:.0f} us "
        f"per chunk",
        file=sys.stderr,
        flush=True,
    )


def print_baseline_ratio(
    executor: str, streams: int, baseline: dict[str, Any], current: dict[str, Any]
) -> None:
    """One line comparing this checkout with the baseline commit at one N (current over
    baseline: below 1 is better)."""

    def ratio(now: float, before: float) -> str:
        return f"{now / before:.3f}" if before else "nan"

    old, new = baseline["result"], current["result"]
    print(
        f"ratio executor={executor} streams={streams} current/baseline "
        f"p50={ratio(new['p50'], old['p50'])} p99={ratio(new['p99'], old['p99'])} "
        f"all_in_us_per_delta={ratio(current['all_in_us'], baseline['all_in_us'])} "
        f"studio_us_per_delta={ratio(current['studio_us'], baseline['studio_us'])} "
        f"ms_per_run={ratio(current['ms_per_run'], baseline['ms_per_run'])} "
        f"(baseline p99_ms={old['p99']:.1f} lost={old['lost']}; "
        f"current p99_ms={new['p99']:.1f} lost={new['lost']}; load average "
        f"{os.getloadavg()[0]:.1f})",
        flush=True,
    )
