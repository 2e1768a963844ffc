"""Two suite runs side by side: what changed in the agent between them (version,
revision, model, instructions, options, tools, judge) and, for each case, its status in
each run, with the first failed expectation's reason where it failed."""

from __future__ import annotations

import json
from typing import Any

from evals.models import SuiteRun
from evals.selectors import suite_run_results

SNAPSHOT_FIELDS = [
    ("agentVersion", "agent version"),
    ("revision", "editor revision"),
    ("model", "model"),
    ("instructions", "instructions"),
    ("defaultOptions", "default options"),
    ("tools", "tools"),
    ("judgeModel", "judge model"),
]


def _text(value: Any) -> str:
    return (
        value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, sort_keys=True)
    )


def snapshot_changes(before: dict[str, Any], after: dict[str, Any]) -> list[dict[str, str]]:
    return [
        {
            "field": key,
            "label": label,
            "before": _text(before.get(key)),
            "after": _text(after.get(key)),
        }
        for key, label in SNAPSHOT_FIELDS
        if before.get(key) != after.get(key)
    ]


def _first_failure(results: list[dict[str, Any]]) -> str:
    for result in results:
        if result["status"] == "passed":
            continue
        for turn in result["turns"]:
            if turn.get("error"):
                return turn["error"]
            for verdict in turn.get("verdicts") or []:
                if not verdict["passed"]:
                    return f"{verdict['type']}: {verdict['reason']}"
        return result["error"]
    return ""


def _by_case(suite_run: SuiteRun) -> dict[str, dict[str, Any]]:
    grouped: dict[str, list[dict[str, Any]]] = {}
    for result in suite_run_results(suite_run=suite_run):
        grouped.setdefault(result["caseName"], []).append(result)
    summary = {c["name"]: c for c in (suite_run.summary or {}).get("cases", [])}
    return {
        name: {
            "status": summary.get(name, {}).get("status", "pending"),
            "passRate": summary.get(name, {}).get("passRate", 0.0),
            "flaky": summary.get(name, {}).get("flaky", False),
            "reason": _first_failure(results),
            "chatUrl": results[0]["chatUrl"],
        }
        for name, results in grouped.items()
    }


def suite_runs_compare(*, before: SuiteRun, after: SuiteRun) -> dict[str, Any]:
    left, right = _by_case(before), _by_case(after)
    changes = snapshot_changes(before.snapshot or {}, after.snapshot or {})
    rows = []
    for name in sorted(set(left) | set(right)):
        a, b = left.get(name), right.get(name)
        changed = (a or {}).get("status") != (b or {}).get("status")
        rows.append({"case": name, "sides": [a, b], "changed": changed})
    return {"changes": changes, "cases": rows}
