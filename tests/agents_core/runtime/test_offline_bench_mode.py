"""The offline provider's benchmark mode (`stamp`): what bench.streaming measures with."""

from __future__ import annotations

import json
import time

import litellm

from agents_core.runtime import offline

TOOLS = [{"type": "function", "function": {"name": "bench_sink", "parameters": {}}}]


async def test_each_delta_carries_its_index_and_the_time_it_was_yielded():
    before = time.time()
    response = await litellm.acompletion(
        model="studio/scripted",
        messages=[{"role": "user", "content": "go"}],
        stream=True,
        tools=TOOLS,
        stamp=6,
        delay=0.01,
    )
    text, arguments, yielded = "", "", []
    async for chunk in response:
        delta = chunk.choices[0].delta
        piece = delta.content or ""
        for call in delta.tool_calls or []:
            piece += call.function.arguments or ""
            arguments += call.function.arguments or ""
        text += delta.content or ""
        if "@" in piece:
            yielded.append((piece, time.time()))
    stamps = [piece.strip('{"log: ') for piece, _ in yielded]
    assert [s.split("@")[0] for s in stamps] == [f"{n:07d}" for n in range(1, 7)]
    times = [float(s.split("@")[1].rstrip(";")) for s in stamps]
    # Stamped when yielded (after the pacing wait), so in order and never after receipt.
    assert before <= times[0] and times == sorted(times)
    assert all(stamp <= received for stamp, (_, received) in zip(times, yielded, strict=True))
    assert times[-1] - times[0] >= 0.04
    assert text.count("@") == 3
    assert json.loads(arguments)["log"].count("@") == 3


def test_restamping_leaves_what_is_not_a_stamp_alone():
    chunk = offline._chunk('{"log": "', tool_use={"function": {"arguments": '"}'}})
    assert offline._restamp(chunk)["text"] == '{"log": "'
    assert chunk["tool_use"]["function"]["arguments"] == '"}'
    stamped = offline._restamp(offline._chunk("0000042@1.000000;"))["text"]
    assert stamped.startswith("0000042@") and float(stamped[8:-1]) > 1.0


def test_the_offline_model_is_priced_in_litellms_map_at_nothing():
    """Known to litellm as a real model is (an unknown one made litellm search its whole
    cost map for a near match on every call): a call costs 0, found at once."""
    info = litellm.get_model_info(f"{offline.PROVIDER}/scripted")
    assert info["input_cost_per_token"] == info["output_cost_per_token"] == 0.0
    assert info["supports_function_calling"] is True
    response = litellm.completion(
        model="studio/scripted", messages=[{"role": "user", "content": "hello"}]
    )
    assert litellm.completion_cost(completion_response=response) == 0.0
