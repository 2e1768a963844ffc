"""The incremental partial-JSON parser: values and patches agree with a full parse at
every delta boundary, whatever the delta size."""

from __future__ import annotations

import copy
import json
import random

import jiter
import pytest

from agents_core.runtime.bus.patches import compact_patches, merge_patches
from agents_core.runtime.run.partial_json import (
    IncrementalJSONParser,
    PartialJSONError,
    parse_partial,
)


def apply(root, patch):
    path = patch["path"]
    if patch["op"] == "set":
        if not path:
            return copy.deepcopy(patch["value"])
        node = root
        for key in path[:-1]:
            node = node[key]
        if isinstance(node, list) and path[-1] == len(node):
            node.append(copy.deepcopy(patch["value"]))
        else:
            node[path[-1]] = copy.deepcopy(patch["value"])
        return root
    if not path:
        return root + patch["value"]
    node = root
    for key in path[:-1]:
        node = node[key]
    node[path[-1]] += patch["value"]
    return root


def random_value(rng, depth=0):
    pick = rng.random()
    if depth > 3 or pick < 0.3:
        return rng.choice(
            [
                0,
                -2.5e3,
                12345678901234567890,
                True,
                False,
                None,
                "plain",
                "",
                'esc"aped\\ \n\t/ é中😀',
                3.25,
            ]
        )
    if pick < 0.65:
        return {f'k{i}"é': random_value(rng, depth + 1) for i in range(rng.randint(0, 4))}
    return [random_value(rng, depth + 1) for _ in range(rng.randint(0, 4))]


@pytest.mark.parametrize("seed", range(5))
def test_values_and_patches_match_a_full_parse_at_every_delta(seed):
    rng = random.Random(seed)
    for _ in range(150):
        text = json.dumps(
            random_value(rng), ensure_ascii=rng.random() < 0.5, indent=rng.choice([None, 1])
        )
        parser, patched, step = IncrementalJSONParser(), None, rng.randint(1, 17)
        batched, batch = None, []
        for start in range(0, len(text), step):
            merged = []
            merge_patches(merged, parser.feed(text[start : start + step]))
            for patch in merged:
                patched = apply(patched, patch)
            # Several deltas coalesced into one event, its patches compacted.
            merge_patches(batch, copy.deepcopy(merged))
            if rng.random() < 0.3:
                for patch in compact_patches(batch):
                    batched = apply(batched, patch)
                batch = []
                assert batched == patched
            value = copy.deepcopy(parser.value())
            assert patched == value
            prefix = text[: start + step]
            if prefix.rstrip()[-1:] not in "0123456789.eE+-":
                try:
                    expected = jiter.from_json(prefix.encode(), partial_mode="trailing-strings")
                except ValueError:
                    continue  # an unfinished literal (tru): jiter refuses, we show nothing
                assert value == expected, prefix
        assert parser.finish() == json.loads(text)


def test_a_string_grows_by_append_patches_only():
    parser = IncrementalJSONParser()
    assert parser.feed('{"a": "he') == [
        {"op": "set", "path": [], "value": {}},
        {"op": "set", "path": ["a"], "value": "he"},
    ]
    assert parser.feed("llo\\n wor") == [{"op": "append", "path": ["a"], "value": "llo\n wor"}]
    assert parser.feed('ld", "b": [1') == [
        {"op": "append", "path": ["a"], "value": "ld"},
        {"op": "set", "path": ["b"], "value": []},
        {"op": "set", "path": ["b", 0], "value": 1},
    ]
    assert parser.value() == {"a": "hello\n world", "b": [1]}


def test_escapes_and_surrogate_pairs_split_across_deltas():
    text = json.dumps({"s": "a\u00e9\U0001f600\\b"})
    for cut in range(1, len(text)):
        parser = IncrementalJSONParser()
        parser.feed(text[:cut])
        parser.feed(text[cut:])
        assert parser.finish() == json.loads(text)


def test_compaction_folds_a_new_container_into_one_set():
    parser = IncrementalJSONParser()
    batch = []
    for delta in ['{"a": [1, ', '{"b": "x', 'y"}], "c": "z']:
        merge_patches(batch, parser.feed(delta))
    assert compact_patches(batch) == [
        {"op": "set", "path": [], "value": {"a": [1, {"b": "xy"}], "c": "z"}}
    ]


def test_invalid_json_raises_with_a_position():
    parser = IncrementalJSONParser()
    with pytest.raises(PartialJSONError):
        parser.feed('{"a" 1}')
    with pytest.raises(PartialJSONError):
        IncrementalJSONParser().finish()


def test_parse_partial_reads_a_whole_prefix_once():
    assert parse_partial('[{"x": "ab') == [{"x": "ab"}]
