"""The program the sandboxed interpreter runs (`python3 -I -S -c <this file's text>`).

Standard library only, no Django: it reads one JSON request on stdin
({"code", "input", "marker"}), defines the author's `run(input)`, calls it, and writes the
result after the marker as the last line of stdout. Everything the code prints comes
before the marker and is kept as logs; the marker is random per call, so a print cannot
pass for the result. This file is a program text, never imported by the server.
"""

import ast
import json
import os
import re
import sys
import traceback


def _compiled(code):
    # Either a module that defines run(input), or the body of run(input).
    if re.search(r"^(async\s+)?def\s+run\s*\(", code, re.MULTILINE):
        return compile(code, "<tool>", "exec")
    body = "".join("    " + line for line in code.splitlines(True)) or "    pass\n"
    try:
        tree = ast.parse("def run(input):\n" + body, "<tool>")
    except SyntaxError as exc:
        exc.lineno = (exc.lineno or 1) - 1
        raise
    # Tracebacks count lines of what the author wrote, not of the wrapper.
    ast.increment_lineno(tree, -1)
    return compile(tree, "<tool>", "exec")


def _main():
    request = json.loads(sys.stdin.buffer.read().decode("utf-8"))
    marker = request.pop("marker")
    try:
        namespace = {"__name__": "__tool__"}
        exec(_compiled(request["code"]), namespace)  # noqa: S102
        run = namespace.get("run")
        if not callable(run):
            raise TypeError("The code must define run(input).")
        output = run(request["input"])
        if hasattr(output, "__await__"):
            import asyncio

            output = asyncio.run(output)
        result = json.dumps({"ok": True, "output": output}, allow_nan=False)
    except BaseException as exc:  # noqa: BLE001 - SystemExit and KeyboardInterrupt too
        lines = traceback.format_exception(type(exc), exc, exc.__traceback__)
        # Drop the runner's own frames: the author only needs their code's lines.
        trace = "".join(line for line in lines if '"<string>"' not in line)
        message = f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__
        result = json.dumps({"ok": False, "error": message, "traceback": trace})
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except Exception:  # noqa: BLE001,S110 - a closed stream must not hide the result
            pass
    os.write(1, ("\n" + marker + result + "\n").encode("utf-8"))


_main()
