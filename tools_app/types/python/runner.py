"""The program the sandboxed interpreter runs (`python3 -I -S -c <this file's text>`).

Standard library only, no Django: it reads one request on stdin (its length in 8 bytes,
then a `marshal` of {"code", "module", "input", "marker", "cpu"}, written by the server;
the length, not the end of stdin, ends it, so a copy of the pipe's write end held by a
forked server process cannot keep the run waiting), lowers its CPU time
limit to the run's, defines the author's `run(input)`, calls it, and writes the result
as JSON after the marker as the last line of stdout. Everything the code prints comes
before the marker and is kept as logs; the marker is random per call, so a print cannot
pass for the result. The process ends as soon as the result is written. Stdin closed
before a whole request (a process started ahead whose
server went away) ends it with no output. This file is a program text, never imported by the server.

It imports only built-in and C modules (marshal, posix, resource, _json) before the author's
code runs: `json`, `re`, `ast` and `traceback` would double an interpreter's start (they
pull in enum, collections, functools...). `traceback` is loaded only when the code fails.
"""

import marshal
import posix
import resource
import sys


def _limit_cpu(seconds):
    # The process may have been started ahead of its run: its CPU time so far (the
    # interpreter's start) is not the run's, and the run gets `seconds` on top of it.
    usage = resource.getrusage(resource.RUSAGE_SELF)
    soft = int(usage.ru_utime + usage.ru_stime) + 1 + seconds
    _, hard = resource.getrlimit(resource.RLIMIT_CPU)
    if hard != resource.RLIM_INFINITY:
        soft = min(soft, hard)
        hard = min(soft + 1, hard)
    else:
        hard = soft + 1
    resource.setrlimit(resource.RLIMIT_CPU, (soft, hard))


def _shifted(code, lines):
    # The same code object, and every one nested in it, `lines` lines earlier.
    consts = tuple(
        _shifted(const, lines) if isinstance(const, type(code)) else const
        for const in code.co_consts
    )
    return code.replace(co_firstlineno=code.co_firstlineno - lines, co_consts=consts)


def _compiled(source, module):
    # Either a module that defines run(input) (the server tells which), or the body of
    # run(input): tracebacks then count lines of what the author wrote, not the wrapper.
    if module:
        return compile(source, "<tool>", "exec")
    body = "".join("    " + line for line in source.splitlines(True)) or "    pass\n"
    try:
        code = compile("def run(input):\n" + body, "<tool>", "exec")
    except SyntaxError as exc:
        exc.lineno = (exc.lineno or 1) - 1
        raise
    return _shifted(code, 1)


def _encoder():
    # json.dumps(value, allow_nan=False) through the stdlib's own C encoder, which is
    # what json.dumps uses, without importing the json package (and re).
    try:
        from _json import encode_basestring_ascii, make_encoder

        def default(value):
            raise TypeError(f"Object of type {type(value).__name__} is not JSON serializable")

        encode = make_encoder({}, default, encode_basestring_ascii, None, ": ", ", ", 0, 0, 0)
        encode(0, 0)
        return lambda value: "".join(encode(value, 0))
    except (ImportError, TypeError):
        import json

        return lambda value: json.dumps(value, allow_nan=False)


def _request():
    head = sys.stdin.buffer.read(8)
    size = int.from_bytes(head, "little") if len(head) == 8 else 0
    data = sys.stdin.buffer.read(size) if size else b""
    # From the server, the one writer of this pipe (never read on the server side).
    return marshal.loads(data) if size and len(data) == size else None  # noqa: S302


def _main():
    request = _request()
    if request is None:
        return
    _limit_cpu(request["cpu"])
    marker = request["marker"]
    dumps = _encoder()
    try:
        namespace = {"__name__": "__tool__"}
        exec(_compiled(request["code"], request["module"]), namespace)  # noqa: S102
        run = namespace.get("run")
        if not callable(run):
            raise TypeError("The code must define run(input).")
        output = run(request["input"])
        if hasattr(output, "__await__"):
            import asyncio

            output = asyncio.run(output)
        result = dumps({"ok": True, "output": output})
    except BaseException as exc:  # noqa: BLE001 - SystemExit and KeyboardInterrupt too
        import traceback

        lines = traceback.format_exception(type(exc), exc, exc.__traceback__)
        # Drop the runner's own frames: the author only needs their code's lines.
        trace = "".join(line for line in lines if '"<string>"' not in line)
        message = f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__
        result = dumps({"ok": False, "error": message, "traceback": trace})
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except Exception:  # noqa: BLE001,S110 - a closed stream must not hide the result
            pass
    payload = memoryview(("\n" + marker + result + "\n").encode("utf-8"))
    while payload:
        payload = payload[posix.write(1, payload) :]
    # The run is over once its result is written: no interpreter teardown (the server
    # kills whatever the code left running, threads and children alike).
    posix._exit(0)


_main()
