"""The expectation engine alone: no database, no model."""

from __future__ import annotations

import pytest

from evals.expectations import Observation, check_turn, subset_difference
from evals.judge import lexical_similarity, parse_verdict
from providers.offline_judge import verdict

OBS = Observation(
    answer="Here is what I found. weather_lookup returned Paris, 18 C, cloudy.",
    tool_calls=[
        {"name": "weather_lookup", "input": {"city": "Paris", "units": "metric"}},
        {"name": "unit_convert", "input": {"value": 3, "from": "km", "to": "mi", "tags": [1, 2]}},
    ],
    steps=2,
    tokens=120,
    cost=0.0,
    duration_ms=850.0,
)


def one(exp: dict, obs: Observation = OBS, **kw):
    (result,) = check_turn([exp], obs, **kw)
    return result


def test_subset_names_the_path_of_the_first_difference():
    actual = {"a": {"b": [1, {"c": "x"}]}, "d": 1}
    assert subset_difference({"a": {"b": [1, {"c": "x"}]}}, actual) is None
    assert subset_difference({"a": {"b": [1, {"c": "y"}]}}, actual) == ("$.a.b[1].c", "y", "x")
    assert subset_difference({"e": 1}, actual) == ("$.e", 1, None)
    assert subset_difference({"a": {"b": [1]}}, actual) == ("$.a.b", [1], [1, {"c": "x"}])


def test_subset_compares_numbers_by_value_and_booleans_apart():
    assert subset_difference({"n": 3}, {"n": 3.0}) is None
    assert subset_difference({"n": 1}, {"n": True}) == ("$.n", 1, True)
    assert subset_difference({"n": "3"}, {"n": 3}) == ("$.n", "3", 3)


def test_tool_called_with_matching_arguments_passes():
    result = one({"type": "tool_called", "tool": "weather_lookup", "args": {"city": "Paris"}})
    assert result.passed, result.reason


def test_tool_called_with_a_wrong_argument_gives_path_expected_and_actual():
    result = one({"type": "tool_called", "tool": "weather_lookup", "args": {"city": "London"}})
    assert not result.passed
    assert (result.path, result.expected, result.actual) == ("$.city", "London", "Paris")
    assert "$.city" in result.reason


def test_tool_called_against_a_json_schema():
    schema = {"type": "object", "properties": {"value": {"type": "string"}}}
    result = one({"type": "tool_called", "tool": "unit_convert", "argsSchema": schema})
    assert not result.passed and result.path == "$.value"
    schema["properties"]["value"] = {"type": "number", "minimum": 1}
    assert one({"type": "tool_called", "tool": "unit_convert", "argsSchema": schema}).passed


def test_tool_called_missing_and_count():
    missing = one({"type": "tool_called", "tool": "ask_user"})
    assert not missing.passed and "weather_lookup, unit_convert" in missing.reason
    assert one({"type": "tool_called", "tool": "unit_convert", "count": 1}).passed
    twice = one({"type": "tool_called", "tool": "unit_convert", "count": 2})
    assert not twice.passed and (twice.expected, twice.actual) == (2, 1)


def test_tool_not_called_and_call_order():
    assert one({"type": "tool_not_called", "tool": "ask_user"}).passed
    assert not one({"type": "tool_not_called", "tool": "unit_convert"}).passed
    assert one({"type": "call_order", "tools": ["weather_lookup", "unit_convert"]}).passed
    assert not one({"type": "call_order", "tools": ["unit_convert", "weather_lookup"]}).passed


@pytest.mark.parametrize(
    ("exp", "passed"),
    [
        ({"type": "answer_contains", "value": "PARIS"}, True),
        ({"type": "answer_contains", "value": "PARIS", "ignoreCase": False}, False),
        ({"type": "answer_regex", "pattern": r"\d+ C"}, True),
        ({"type": "answer_regex", "pattern": r"\d+ F\b"}, False),
        ({"type": "answer_equals", "value": OBS.answer + "  "}, True),
        ({"type": "answer_equals", "value": "Paris"}, False),
        ({"type": "answer_json", "schema": {"type": "object"}}, False),
    ],
)
def test_answer_expectations(exp, passed):
    assert one(exp).passed is passed


def test_answer_json_checks_the_schema_with_a_path():
    obs = Observation(answer='{"city": "Paris", "temp": "warm"}')
    schema = {"type": "object", "properties": {"temp": {"type": "number"}}}
    result = one({"type": "answer_json", "schema": schema}, obs)
    assert not result.passed and result.path == "$.temp"
    assert one({"type": "answer_json", "schema": {"required": ["city"]}}, obs).passed


def test_limits_and_errors():
    assert one({"type": "max_steps", "value": 2}).passed
    over = one({"type": "max_tokens", "value": 100})
    assert not over.passed and over.actual == 120
    assert one({"type": "max_duration_ms", "value": 1000}).passed
    assert one({"type": "max_cost", "value": 0}).passed
    unknown = one({"type": "max_cost", "value": 1}, Observation(cost=None))
    assert not unknown.passed and "unknown" in unknown.reason
    assert one({"type": "no_error"}).passed
    failed = one({"type": "no_error"}, Observation(status="failed", error="boom"))
    assert not failed.passed and "boom" in failed.reason


def test_judge_threshold_and_a_failing_judge():
    def judge(rubric, answer, model):
        return 0.4, f"{model} read it"

    low = one({"type": "judge", "rubric": "r", "threshold": 0.5}, judge=judge, judge_model="m/x")
    assert not low.passed and "m/x read it" in low.reason and low.actual == 0.4
    assert one({"type": "judge", "rubric": "r", "threshold": 0.4}, judge=judge).passed

    def broken(rubric, answer, model):
        raise RuntimeError("no key")

    result = one({"type": "judge", "rubric": "r"}, judge=broken)
    assert not result.passed and "no key" in result.reason


def test_similarity_is_lexical_cosine():
    assert lexical_similarity("Paris is cloudy", "cloudy is PARIS") == pytest.approx(1.0)
    assert lexical_similarity("Paris", "London") == 0.0
    assert 0 < lexical_similarity("Paris is cloudy", "Paris is sunny") < 1
    result = one(
        {"type": "similar", "reference": "Paris cloudy", "threshold": 0.3},
        similarity=lexical_similarity,
    )
    assert result.passed, result.reason


def test_offline_judge_scores_the_share_of_criteria_met():
    answer = "Paris is cloudy at 18 degrees."
    assert verdict("- Paris\n- cloudy degrees", answer)["score"] == 1.0
    half = verdict("Paris; humidity", answer)
    assert half["score"] == 0.5 and "humidity" in half["reason"]
    assert verdict("mentions Paris", answer)["score"] == 0.0  # every long word must appear


def test_parse_verdict_reads_json_in_text_and_refuses_garbage():
    assert parse_verdict('Sure: {"score": 0.7, "reason": "ok"}') == (0.7, "ok")
    assert parse_verdict('{"score": 3}')[0] == 1.0
    with pytest.raises(RuntimeError):
        parse_verdict("great answer")


def test_an_unknown_expectation_type_is_refused():
    with pytest.raises(ValueError, match="nope"):
        check_turn([{"type": "nope"}], OBS)
