"""The expectation engine: what one turn of a run did, checked against a case's
expectations. Pure Python (no database, no model calls): the judge and the similarity
measure are passed in as callables, so the runner gives the real ones and tests give
their own.

Every expectation gives a `Verdict`: passed or not, and a reason a person can read; for
tool arguments also the JSON path of the first difference with the expected and actual
values there.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from typing import Any

from jsonschema import Draft202012Validator

from common.patterns import PatternError, pattern_search

# (rubric, answer, model) -> (score in [0, 1], reason)
Judge = Callable[[str, str, str], tuple[float, str]]
# (reference, answer) -> similarity in [0, 1]
Similarity = Callable[[str, str], float]

_MISSING = object()


@dataclass
class Observation:
    """What one turn of a run produced, in the shape the engine reads."""

    answer: str = ""
    tool_calls: list[dict[str, Any]] = field(default_factory=list)  # {name, input, ...}
    steps: int = 0
    tokens: int = 0
    cost: float | None = None
    duration_ms: float = 0.0
    status: str = "completed"
    error: str = ""


@dataclass
class Verdict:
    type: str
    passed: bool
    reason: str
    path: str | None = None
    expected: Any = None
    actual: Any = None

    def as_dict(self) -> dict[str, Any]:
        return {key: value for key, value in asdict(self).items() if value is not None}


def _same_scalar(expected: Any, actual: Any) -> bool:
    if isinstance(expected, bool) or isinstance(actual, bool):
        return type(expected) is type(actual) and expected == actual
    if isinstance(expected, int | float) and isinstance(actual, int | float):
        return math.isclose(expected, actual, rel_tol=1e-9, abs_tol=1e-12)
    return type(expected) is type(actual) and expected == actual


def subset_difference(expected: Any, actual: Any, path: str = "$") -> tuple[str, Any, Any] | None:
    """The first place where `actual` does not contain `expected`: (JSON path, expected
    value, actual value there), or None. Objects: every expected key must be present
    with a matching value (extra keys are fine). Arrays: the same length, element by
    element. Scalars: equal (numbers by value, booleans only equal booleans)."""
    if isinstance(expected, dict):
        if not isinstance(actual, dict):
            return path, expected, actual
        for key, value in expected.items():
            child = f"{path}.{key}" if re.fullmatch(r"[A-Za-z_]\w*", key) else f"{path}[{key!r}]"
            if key not in actual:
                return child, value, None
            found = subset_difference(value, actual[key], child)
            if found:
                return found
        return None
    if isinstance(expected, list):
        if not isinstance(actual, list) or len(actual) != len(expected):
            return path, expected, actual
        for index, (want, got) in enumerate(zip(expected, actual, strict=True)):
            found = subset_difference(want, got, f"{path}[{index}]")
            if found:
                return found
        return None
    return None if _same_scalar(expected, actual) else (path, expected, actual)


def schema_problem(schema: dict[str, Any], value: Any) -> tuple[str, str] | None:
    """The first JSON Schema error of `value`: (JSON path, message), or None."""
    errors = sorted(Draft202012Validator(schema).iter_errors(value), key=lambda e: list(e.path))
    if not errors:
        return None
    return errors[0].json_path, errors[0].message


def _calls(obs: Observation, name: str) -> list[dict[str, Any]]:
    return [call for call in obs.tool_calls if call.get("name") == name]


def _tool_called(exp: dict[str, Any], obs: Observation) -> Verdict:
    name = exp["tool"]
    calls = _calls(obs, name)
    kind = "tool_called"
    if "count" in exp and len(calls) != exp["count"]:
        return Verdict(
            kind,
            False,
            f"{name} was called {len(calls)} time(s), expected {exp['count']}",
            expected=exp["count"],
            actual=len(calls),
        )
    if not calls:
        called = ", ".join(c.get("name", "?") for c in obs.tool_calls) or "no tool"
        return Verdict(kind, False, f"{name} was not called (called: {called})")
    if "args" not in exp and "argsSchema" not in exp:
        return Verdict(kind, True, f"{name} was called {len(calls)} time(s)")
    first_miss: Verdict | None = None
    for call in calls:
        miss = _args_miss(exp, call.get("input"), name)
        if miss is None:
            return Verdict(kind, True, f"{name} was called with the expected arguments")
        first_miss = first_miss or miss
    return first_miss  # type: ignore[return-value]


def _args_miss(exp: dict[str, Any], value: Any, name: str) -> Verdict | None:
    if "args" in exp:
        found = subset_difference(exp["args"], value)
        if found:
            path, want, got = found
            where = "is missing" if got is None else f"is {_short(got)}"
            return Verdict(
                "tool_called",
                False,
                f"{name} arguments differ at {path}: expected {_short(want)}, {where}",
                path=path,
                expected=want,
                actual=got,
            )
    if "argsSchema" in exp:
        problem = schema_problem(exp["argsSchema"], value)
        if problem:
            path, message = problem
            return Verdict(
                "tool_called",
                False,
                f"{name} arguments do not match the schema at {path}: {message}",
                path=path,
                actual=value,
            )
    return None


def _short(value: Any, limit: int = 120) -> str:
    text = json.dumps(value, ensure_ascii=False, default=str)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _tool_not_called(exp: dict[str, Any], obs: Observation) -> Verdict:
    calls = _calls(obs, exp["tool"])
    if calls:
        return Verdict(
            "tool_not_called",
            False,
            f"{exp['tool']} was called {len(calls)} time(s)",
            actual=len(calls),
        )
    return Verdict("tool_not_called", True, f"{exp['tool']} was not called")


def _call_order(exp: dict[str, Any], obs: Observation) -> Verdict:
    """The named tools were called in this order (other calls may come between)."""
    names = [call.get("name") for call in obs.tool_calls]
    position = 0
    for wanted in exp["tools"]:
        try:
            position = names.index(wanted, position) + 1
        except ValueError:
            return Verdict(
                "call_order",
                False,
                f"{wanted} was not called after the tools before it in the expected order",
                expected=exp["tools"],
                actual=names,
            )
    return Verdict("call_order", True, "the tools were called in the expected order")


def _answer(exp: dict[str, Any], obs: Observation) -> Verdict:
    kind, text = exp["type"], obs.answer
    if kind == "answer_contains":
        flags = exp.get("ignoreCase", True)
        hay, needle = (text.lower(), exp["value"].lower()) if flags else (text, exp["value"])
        ok = needle in hay
        return Verdict(
            kind, ok, f"the answer {'contains' if ok else 'does not contain'} {exp['value']!r}"
        )
    if kind == "answer_regex":
        try:
            ok = pattern_search(exp["pattern"], text)
        except PatternError as exc:  # saved before patterns were held to RE2
            return Verdict(kind, False, f"the pattern /{exp['pattern']}/ cannot be matched: {exc}")
        return Verdict(
            kind, ok, f"the answer {'matches' if ok else 'does not match'} /{exp['pattern']}/"
        )
    if kind == "answer_equals":
        ok = text.strip() == exp["value"].strip()
        reason = "the answer is the expected text" if ok else "the answer differs"
        return Verdict(
            kind, ok, reason, expected=None if ok else exp["value"], actual=None if ok else text
        )
    # answer_json
    try:
        value = json.loads(text)
    except ValueError as exc:
        return Verdict(kind, False, f"the answer is not JSON: {exc}")
    problem = schema_problem(exp.get("schema") or {}, value)
    if problem:
        return Verdict(
            kind,
            False,
            f"the answer's JSON does not match at {problem[0]}: {problem[1]}",
            path=problem[0],
        )
    return Verdict(kind, True, "the answer is JSON that matches the schema")


_LIMITS = {
    "max_steps": ("steps", "step(s)"),
    "max_tokens": ("tokens", "token(s)"),
    "max_cost": ("cost", "USD"),
    "max_duration_ms": ("duration_ms", "ms"),
}


def _limit(exp: dict[str, Any], obs: Observation) -> Verdict:
    attribute, unit = _LIMITS[exp["type"]]
    actual = getattr(obs, attribute)
    if actual is None:
        return Verdict(
            exp["type"], False, f"the run's {attribute} is unknown (no price for its model)"
        )
    ok = actual <= exp["value"]
    shown = round(actual, 6) if isinstance(actual, float) else actual
    return Verdict(
        exp["type"],
        ok,
        f"{shown} {unit} {'<=' if ok else '>'} {exp['value']}",
        expected=exp["value"],
        actual=shown,
    )


def _no_error(exp: dict[str, Any], obs: Observation) -> Verdict:
    if obs.status == "completed" and not obs.error:
        return Verdict("no_error", True, "the run completed")
    return Verdict("no_error", False, f"the run ended {obs.status}: {obs.error or 'no error text'}")


def check_turn(
    expectations: list[dict[str, Any]],
    obs: Observation,
    *,
    judge: Judge | None = None,
    similarity: Similarity | None = None,
    judge_model: str = "",
) -> list[Verdict]:
    """One verdict per expectation, in order."""
    verdicts = []
    for exp in expectations:
        kind = exp["type"]
        if kind == "tool_called":
            verdicts.append(_tool_called(exp, obs))
        elif kind == "tool_not_called":
            verdicts.append(_tool_not_called(exp, obs))
        elif kind == "call_order":
            verdicts.append(_call_order(exp, obs))
        elif kind.startswith("answer_"):
            verdicts.append(_answer(exp, obs))
        elif kind in _LIMITS:
            verdicts.append(_limit(exp, obs))
        elif kind == "no_error":
            verdicts.append(_no_error(exp, obs))
        elif kind == "judge":
            verdicts.append(_judge(exp, obs, judge, judge_model))
        elif kind == "similar":
            verdicts.append(_similar(exp, obs, similarity))
        else:
            raise ValueError(f"unknown expectation type {kind!r}")
    return verdicts


def _judge(exp: dict[str, Any], obs: Observation, judge: Judge | None, model: str) -> Verdict:
    if judge is None:
        return Verdict("judge", False, "no judge is available")
    try:
        score, why = judge(exp["rubric"], obs.answer, exp.get("model") or model)
    except Exception as exc:  # noqa: BLE001 - a judge that fails is a failed expectation
        return Verdict("judge", False, f"the judge failed: {exc}")
    threshold = exp.get("threshold", 0.5)
    ok = score >= threshold
    return Verdict(
        "judge",
        ok,
        f"score {score:.2f} {'>=' if ok else '<'} {threshold}: {why}",
        expected=threshold,
        actual=round(score, 4),
    )


def _similar(exp: dict[str, Any], obs: Observation, similarity: Similarity | None) -> Verdict:
    if similarity is None:
        return Verdict("similar", False, "no similarity measure is available")
    try:
        score = similarity(exp["reference"], obs.answer)
    except Exception as exc:  # noqa: BLE001 - a measure that fails is a failed expectation
        return Verdict("similar", False, f"the similarity could not be measured: {exc}")
    threshold = exp.get("threshold", 0.5)
    ok = score >= threshold
    return Verdict(
        "similar",
        ok,
        f"similarity {score:.2f} {'>=' if ok else '<'} {threshold}",
        expected=threshold,
        actual=round(score, 4),
    )
