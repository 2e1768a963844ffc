"""The offline provider's benchmark mode (`stamp`, bench/offline_stamps.py): what
bench.streaming measures with."""

from __future__ import annotations

import json
import time

import litellm

from bench import offline_stamps
from providers import offline

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
    assert offline_stamps._restamp(chunk)["text"] == '{"log": "'
    assert chunk["tool_use"]["function"]["arguments"] == '"}'
    stamped = offline_stamps._restamp(offline._chunk("0000042@1.000000;"))["text"]
    assert stamped.startswith("0000042@") and float(stamped[8:-1]) > 1.0
