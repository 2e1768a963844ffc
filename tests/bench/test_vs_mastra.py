"""bench.vs_mastra: the harness's npm lock, the options, the install's reuse, the SSE
client's counting and the stand-in's workload (the bench itself is not run here)."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from bench import _mastra, offline_stamps, vs_mastra
from providers import offline

HARNESS = Path(__file__).resolve().parents[2] / "bench" / "mastra"
EXACT = re.compile(r"^\d+\.\d+\.\d+$")
STAMPED = re.compile(r"\d{7}@\d+\.\d+;")


def test_the_harness_pins_node_22_and_mastra_to_exact_versions_in_its_lock():
    package = json.loads((HARNESS / "package.json").read_text())
    lock = json.loads((HARNESS / "package-lock.json").read_text())
    dependencies = package["dependencies"]
    assert dependencies["node"].startswith("22.")
    assert dependencies["@mastra/core"] == "1.71.0"
    assert {"@mastra/deployer", "@mastra/memory", "@mastra/pg", "ai", "zod"} <= set(dependencies)
    assert all(EXACT.match(version) for version in dependencies.values()), dependencies
    assert lock["lockfileVersion"] == 3
    assert lock["packages"][""]["dependencies"] == dependencies
    for name, version in dependencies.items():
        assert lock["packages"][f"node_modules/{name}"]["version"] == version


def test_it_parses_its_options(monkeypatch):
    monkeypatch.setattr(sys, "argv", ["vs_mastra"])
    args = vs_mastra._arguments()
    assert (args.counts, args.seconds, args.rate) == ([1, 10, 100], 8.0, 30.0)
    assert args.parts == {"streaming", "tools", "partial_json"}
    assert args.mastra and args.studio

    monkeypatch.setattr(
        sys,
        "argv",
        ["vs_mastra", "--only", "mastra", "--streams", "1,2", "--seconds", "2", "--parts", "tools"],
    )
    args = vs_mastra._arguments()
    assert (args.counts, args.seconds, args.parts) == ([1, 2], 2.0, {"tools"})
    assert args.mastra and not args.studio


@pytest.mark.parametrize(
    ("argv", "error"),
    [(["--parts", "streaming,speed"], "unknown parts: speed"), (["--only", "both"], "'both'")],
)
def test_it_rejects_an_unknown_part_or_side(monkeypatch, capsys, argv, error):
    monkeypatch.setattr(sys, "argv", ["vs_mastra", *argv])
    with pytest.raises(SystemExit) as exit_info:
        vs_mastra._arguments()
    assert exit_info.value.code == 2
    assert error in capsys.readouterr().err


@pytest.fixture
def harness(tmp_path, monkeypatch):
    """The harness in a temporary folder, and an `npm` on PATH that records its calls and
    lays out what `npm ci` installs (the registry is off this machine)."""
    source, home, bin_dir = tmp_path / "harness", tmp_path / "home", tmp_path / "bin"
    shutil.copytree(HARNESS, source)
    bin_dir.mkdir()
    npm = bin_dir / "npm"
    npm.write_text(
        "#!/bin/sh\n"
        'echo "$PWD $*" >> "$NPM_CALLS"\n'
        "mkdir -p node_modules/node/bin && touch node_modules/node/bin/node\n"
    )
    npm.chmod(0o755)
    calls = tmp_path / "npm-calls"
    calls.touch()
    monkeypatch.setenv("NPM_CALLS", str(calls))
    monkeypatch.setenv("PATH", f"{bin_dir}:/usr/bin:/bin")
    monkeypatch.setattr(_mastra, "HARNESS", source)
    monkeypatch.setattr(_mastra, "HOME", home)
    return source, home, calls


def test_a_second_run_reuses_the_install_until_the_lock_changes(harness):
    source, home, calls = harness

    node = _mastra.install()
    assert node == home / "node_modules" / "node" / "bin" / "node"
    assert calls.read_text().splitlines() == [f"{home} ci --no-audit --no-fund --loglevel=error"]
    assert (home / "package-lock.json").read_bytes() == (source / "package-lock.json").read_bytes()
    assert (home / "server.mjs").exists() and (home / "standin.mjs").exists()

    assert _mastra.install() == node
    assert len(calls.read_text().splitlines()) == 1

    lock = json.loads((source / "package-lock.json").read_text())
    lock["name"] = "changed"
    (source / "package-lock.json").write_text(json.dumps(lock))
    _mastra.install()
    assert len(calls.read_text().splitlines()) == 2


def _event(kind: str, **payload: object) -> bytes:
    return b"data: " + json.dumps({"type": kind, "payload": payload}).encode()


def test_the_sse_client_counts_each_stamped_delta_once_and_stops_at_done():
    chat = _mastra.SseChat(None)
    stamp = "0000001@1000.000000;"
    events = [
        _event("text-delta", id="t", text=stamp),
        _event("tool-call-delta", argsTextDelta="0000002@1000.500000;"),
        # The whole arguments again, once complete: not a delta, not counted.
        _event("tool-call", args={"log": stamp + "0000002@1000.500000;"}),
        _event("text-delta", id="t", text=stamp),  # the same index twice counts once
    ]
    assert not any(chat._event(event, received=1001.0) for event in events)
    assert chat._event(b"data: [DONE]", received=1001.0)
    assert chat.stamps == {1, 2}
    assert chat.latencies == [1000.0, 500.0]
    assert chat.events == 4


@pytest.mark.skipif(shutil.which("node") is None, reason="no node on this machine")
def test_the_stand_in_streams_the_offline_benchmark_mode_s_chunks():
    """Mastra's model stand-in yields what the studio's offline provider yields in
    benchmark mode: the same deltas, in the same paced chunks, then the tool's answer."""
    script = (
        "const { script } = await import(process.argv[1]);"
        "const show = (steps) => steps.map((step) => step().map((part) => "
        "[part.type, part.delta ?? part.finishReason ?? '']));"
        "console.log(JSON.stringify({"
        "first: show(script({ count: 7, toolName: 'bench_sink', finished: false })),"
        "after: show(script({ count: 7, toolName: 'bench_sink', finished: true }))}));"
    )
    done = subprocess.run(
        ["node", "--input-type=module", "-e", script, str(HARNESS / "standin.mjs")],
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    node = json.loads(done.stdout)

    def deltas(slots: list[list[list[str]]]) -> list[str]:
        return [
            STAMPED.sub("<stamp>", delta)
            for slot in slots
            for kind, delta in slot
            if kind in ("text-delta", "tool-input-delta")
        ]

    def offline_deltas(messages: list[dict]) -> tuple[list[str], str]:
        tools = [{"type": "function", "function": {"name": "bench_sink", "parameters": {}}}]
        assert offline.MODES["stamp"].chunks is offline_stamps._bench_chunks
        chunks = list(offline.chunks(messages, {"stamp": 7, "tools": tools}))
        pieces = [
            chunk["text"] or (chunk["tool_use"] or {}).get("function", {}).get("arguments", "")
            for chunk in chunks
            if not chunk["is_finished"]
        ]
        return [STAMPED.sub("<stamp>", piece) for piece in pieces], chunks[-1]["finish_reason"]

    first, finish = offline_deltas([{"role": "user", "content": "go"}])
    assert deltas(node["first"]) == first
    assert len(node["first"]) == len(first) + 1  # one paced slot per chunk, finish included
    assert node["first"][-1] == [["finish", "tool-calls"]] and finish == "tool_calls"
    assert first.count("<stamp>") == 7

    after, finish = offline_deltas(
        [{"role": "user", "content": "go"}, {"role": "tool", "content": "{}"}]
    )
    assert deltas(node["after"]) == after == ["done."]
    assert node["after"][-1] == [["finish", "stop"]] and finish == "stop"
