"""The strict loader of JSON from outside (common.json_input), the error handler's
mapping of what Django and Python raise, and the NUL-free storage encoder."""

from __future__ import annotations

import json

import pytest
from django.core.exceptions import RequestDataTooBig

from common.exception_handler import exception_handler
from common.fields import NulFreeJSONEncoder
from common.json_input import JSONInputError, json_loads, replace_nul, value_problem


def refusal(text: str | bytes, **kwargs) -> tuple[str, str]:
    with pytest.raises(JSONInputError) as caught:
        json_loads(text, **kwargs)
    return caught.value.code, caught.value.extra["errors"][0]["path"]


def test_the_path_of_a_too_deep_document_leads_to_the_first_container_over_the_limit():
    text = '{"x": 1, "a b": [0, {"c": ' + "[" * 70 + "]" * 70 + "}]}"
    # Five levels: the object, the list, the object at [1], c's list and its first list.
    assert refusal(text, max_depth=5) == ("too_deep", '$["a b"][1].c[0][0]')


def test_a_document_at_the_depth_limit_is_read():
    assert json_loads("[" * 64 + "]" * 64, max_depth=64) is not None


def test_brackets_inside_strings_do_not_count_as_nesting():
    assert json_loads(json.dumps({"text": "[" * 10_000}), max_depth=2) == {"text": "[" * 10_000}


def test_an_escaped_backslash_u0000_written_as_text_is_not_a_nul():
    assert json_loads('{"a": "\\\\u0000"}') == {"a": "\\u0000"}


def test_syntax_errors_come_with_line_and_column():
    with pytest.raises(JSONInputError) as caught:
        json_loads('{\n  "a": }')
    error = caught.value.extra["errors"][0]
    assert (caught.value.code, error["line"], error["column"]) == ("invalid_json", 2, 8)


def test_long_fields_are_exempt_from_the_string_limit_but_not_other_fields():
    body = json.dumps({"text": "x" * 50, "name": "y" * 50})
    assert refusal(body, max_string_chars=10, long_fields=("text",)) == (
        "string_too_long",
        "$.name",
    )
    assert json_loads(json.dumps({"text": "x" * 50}), max_string_chars=10, long_fields=("text",))


def test_a_charset_that_does_not_decode_the_body_is_an_encoding_error():
    assert refusal("é".encode("latin-1"), encoding="utf-8") == ("invalid_encoding", "$")
    assert json_loads('{"a": "é"}'.encode("latin-1"), encoding="latin-1") == {"a": "é"}


def test_value_problem_stops_after_max_nodes_on_shared_values():
    shared: list = ["x"] * 10
    for _ in range(6):
        shared = [shared] * 10  # ten million leaves, seven lists
    problem = value_problem(shared, max_nodes=1000)
    assert problem is not None and problem.code == "too_many_values"


def test_replace_nul_replaces_in_keys_and_values_and_keeps_clean_values():
    assert replace_nul({"a\x00": ["b\x00", 1, None]}) == {"a\ufffd": ["b\ufffd", 1, None]}
    clean = {"a": "b"}
    assert replace_nul("no nul") == "no nul" and replace_nul(clean) == clean


def test_the_storage_encoder_writes_nul_as_u_fffd():
    assert json.loads(json.dumps({"k\x00": "v\x00"}, cls=NulFreeJSONEncoder)) == {
        "k\ufffd": "v\ufffd"
    }
    assert json.dumps({"k": "\\u0000"}, cls=NulFreeJSONEncoder) == '{"k": "\\\\u0000"}'


def test_django_s_body_limit_is_a_json_413():
    response = exception_handler(RequestDataTooBig("too big"), {})
    assert response.status_code == 413
    assert response.data["code"] == "body_too_large"


def test_a_recursion_error_in_a_view_is_a_400_not_a_500():
    response = exception_handler(RecursionError("maximum recursion depth exceeded"), {})
    assert (response.status_code, response.data["code"]) == (400, "too_deep")
