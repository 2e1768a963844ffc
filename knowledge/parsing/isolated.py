"""Reading a document in a child process with its own memory and time limits.

The worker starts `python -m knowledge.parsing.isolated`, writes the document's bytes to
it and waits for its chunks. The child imports the parsers, then limits its own address
space (`RLIMIT_AS`: what it maps with the parsers loaded plus the parse's budget) and CPU
time, and only then reads the bytes. The worker kills it when the wall-clock limit
passes or when the document is no longer its own (cancelled, deleted, taken over:
`beat` raises), so the memory a parse took goes back to the system at once, whatever
the parsers did with it. What comes back is the chunks as JSON, never pickled objects;
what goes in has none of the worker's environment (keys, settings) beyond the locale.

A fresh interpreter per document costs about half a second of start-up; in exchange it
works the same from a prefork or solo Celery worker and from the embedded studio's
worker thread, and shares nothing with the worker (connections, threads, locks).

The limits on what a parse produces (knowledge.parsing.limits) refuse a bomb early and
by name; these limits stop what no count foresees.
"""

from __future__ import annotations

import json
import os
import resource
import select
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from knowledge.parsing import parse
from knowledge.parsing.base import ParseError
from knowledge.parsing.chunking import Draft, chunk_blocks
from knowledge.parsing.limits import Limits, TooLarge

POLL_SECONDS = 1.0
_MB = 1 << 20
_PIECE = 1 << 20
# Where the `knowledge` package lives, for the child's import path.
_ROOT = str(Path(__file__).resolve().parents[2])
_PASSED_ON = ("LANG", "LC_ALL", "LC_CTYPE", "TZ", "TMPDIR")


@dataclass(frozen=True)
class Job:
    content: bytes
    format: str
    limits: Limits
    chunk_chars: int
    overlap: int
    memory_mb: int
    seconds: int


@dataclass
class Reading:
    drafts: list[Draft]
    title: str
    pages: int | None
    # The child's peak resident memory and how long the reading took, for the logs.
    peak_rss_mb: float
    seconds: float


def read_isolated(job: Job, *, beat: Callable[[], None]) -> Reading:
    """Parse and chunk `job.content` in a child process. Raises ParseError (TooLarge for
    a limit) with the reason; whatever `beat` raises (called about once a second while
    the child works) stops the child and is raised here."""
    header = {key: value for key, value in asdict(job).items() if key != "content"}
    started = time.monotonic()
    child = subprocess.Popen(  # noqa: S603 - this interpreter, our own module
        [sys.executable, "-m", __name__],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        env=_child_env(),
    )
    try:
        output = _wait(child, json.dumps(header).encode() + b"\n" + job.content, job, beat)
    finally:
        if child.poll() is None:
            child.kill()
        child.wait()
    if not output:
        raise _died(child.returncode, job)
    answer = json.loads(output)
    if "error" in answer:
        error = (TooLarge if answer.get("too_large") else ParseError)(answer["error"])
        error.peak_rss_mb = answer["peak_rss_mb"]
        raise error
    return Reading(
        drafts=[Draft(*draft) for draft in answer["drafts"]],
        title=answer["title"],
        pages=answer["pages"],
        peak_rss_mb=answer["peak_rss_mb"],
        seconds=time.monotonic() - started,
    )


def _child_env() -> dict[str, str]:
    """The parser's environment: the import path and the locale, none of the worker's
    settings or keys (it parses untrusted bytes and needs nothing else)."""
    env = {"PYTHONPATH": os.pathsep.join([_ROOT, *sys.path]), "PATH": os.defpath}
    env.update({key: value for key, value in os.environ.items() if key in _PASSED_ON})
    return env


def _wait(child: subprocess.Popen, request: bytes, job: Job, beat: Callable[[], None]) -> bytes:
    """The child's answer (b"" if it died without one). The request is written first:
    the child reads all of it before it parses."""
    assert child.stdin is not None and child.stdout is not None  # noqa: S101 - piped above
    try:
        child.stdin.write(request)
        child.stdin.close()
    except BrokenPipeError:  # the child died while reading the request
        return b""
    started = time.monotonic()
    output = bytearray()
    while True:
        ready, _, _ = select.select([child.stdout], [], [], POLL_SECONDS)
        if ready:
            piece = os.read(child.stdout.fileno(), _PIECE)
            if not piece:
                return bytes(output)
            output += piece
            continue
        if time.monotonic() - started > job.seconds:
            raise _too_slow(job)
        beat()


def _died(returncode: int | None, job: Job) -> ParseError:
    if returncode == -signal.SIGXCPU:
        return _too_slow(job)
    if returncode is not None and returncode >= 0:  # not a signal: a failure of its own
        return ParseError(
            f"The document's reader stopped with exit code {returncode} (the worker's log "
            "has its output)."
        )
    return TooLarge(
        f"Reading the document stopped (signal {-(returncode or 0)}): it probably needs more "
        f"than the {job.memory_mb:,} MB of memory a document may use "
        "(STUDIO_KNOWLEDGE_PARSE_MEMORY_MB)."
    )


def _too_slow(job: Job) -> TooLarge:
    return TooLarge(
        f"Reading the document took longer than the {job.seconds:,} seconds a document may "
        "take (STUDIO_KNOWLEDGE_PARSE_SECONDS)."
    )


# --- the child ---------------------------------------------------------------------------
def main() -> None:
    """The child: the request (a JSON line, then the bytes) on stdin, the answer on
    stdout."""
    header = json.loads(sys.stdin.buffer.readline())
    header["limits"] = Limits(**header["limits"])
    space = _limit_self(memory_mb=header["memory_mb"], seconds=header["seconds"])
    job = Job(content=sys.stdin.buffer.read(), **header)
    try:
        answer = _work(job)
    except TooLarge as exc:
        answer = {"error": str(exc), "too_large": True}
    except Exception as exc:  # noqa: BLE001 - any failure is the document's, with its reason
        reason = str(exc) if isinstance(exc, ParseError) else f"{type(exc).__name__}: {exc}"
        reason = "" if isinstance(exc, MemoryError) else reason
        # A parser that ran out of memory says so in its own words (lxml: "unknown
        # error"): a failure past half the budget is reported as memory.
        if (
            isinstance(exc, MemoryError)
            or _status_bytes("VmPeak") > space - job.memory_mb * _MB // 2
        ):
            reason = (
                f"Reading the document needs more than the {job.memory_mb:,} MB of memory "
                f"a document may use (STUDIO_KNOWLEDGE_PARSE_MEMORY_MB). {reason}"
            ).strip()
            answer = {"error": reason, "too_large": True}
        else:
            answer = {"error": reason}
    answer["peak_rss_mb"] = _status_bytes("VmHWM") / _MB
    sys.stdout.buffer.write(json.dumps(answer).encode())
    sys.stdout.buffer.flush()


def _limit_self(*, memory_mb: int, seconds: int) -> int:
    """Address space: what this process maps now (the interpreter and the parsers) plus
    the budget; CPU time: the wall-clock limit and a second. Returns the space."""
    space = _status_bytes("VmSize") + memory_mb * _MB
    _lower(resource.RLIMIT_AS, space, space)
    # SIGXCPU at the soft limit (reported as too slow), SIGKILL a second later.
    _lower(resource.RLIMIT_CPU, seconds + 1, seconds + 2)
    return space


def _lower(kind: int, soft: int, hard: int) -> None:
    current = resource.getrlimit(kind)[1]
    if current != resource.RLIM_INFINITY:
        soft, hard = min(soft, current), min(hard, current)
    resource.setrlimit(kind, (soft, hard))


def _status_bytes(field: str) -> int:
    """A size from /proc/self/status: VmSize (address space now), VmHWM (peak resident
    memory since this interpreter started; getrusage's peak would include the worker's
    from before the exec)."""
    with open("/proc/self/status") as status:
        for line in status:
            if line.startswith(f"{field}:"):
                return int(line.split()[1]) * 1024
    return 0


def _work(job: Job) -> dict[str, Any]:
    parsed = parse(job.content, format=job.format, limits=job.limits)
    drafts = chunk_blocks(
        parsed.blocks,
        chunk_chars=job.chunk_chars,
        overlap=job.overlap,
        max_chunks=job.limits.max_chunks,
    )
    return {
        "drafts": [[d.text, d.heading, d.page, d.table] for d in drafts],
        "title": parsed.title,
        "pages": parsed.pages,
    }


if __name__ == "__main__":
    main()
