"""Upload bombs: how long the worker takes to refuse each one and how much memory the
parser process and the worker reach (never pass/fail).

    python -m bench.knowledge_bombs

Each bomb goes through the ingestion's reading step (knowledge.parsing.isolated: a
child process under the settings' limits): seconds from the bytes to the refusal, the
child's peak resident memory (VmHWM), and what the worker's resident memory grew by.
"""

from __future__ import annotations

import json
import os
import time


def main() -> None:
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "studio.settings_test")
    import django

    django.setup()
    from django.conf import settings

    from knowledge.parsing import Limits, ParseError
    from knowledge.parsing.isolated import Job, read_isolated
    from tests.knowledge import files

    bombs = {
        "docx 50 MB of text": (lambda: files.docx_bomb(50_000_000), "docx"),
        "docx lying about 50 MB": (lambda: files.docx_lying_about_size(50_000_000), "docx"),
        "docx of 2,100 parts": (lambda: files.docx_with_parts(2_100), "docx"),
        "pdf of 2,001 pages": (lambda: files.pdf_of_pages(2_001), "pdf"),
        "json 100,000 deep": (lambda: files.deep_json(100_000), "json"),
        "html of 400,000 elements": (lambda: files.giant_html(400_000), "html"),
        "json of 300,000 objects": (
            lambda: json.dumps([{"a": i} for i in range(300_000)]).encode(),
            "json",
        ),
    }
    print(f"{'bomb':26} {'bytes':>9} {'seconds':>7} {'child MB':>8} {'worker +MB':>10}  refusal")
    for name, (make, fmt) in bombs.items():
        content = make()
        job = Job(
            content=content,
            format=fmt,
            limits=Limits.from_settings(),
            chunk_chars=settings.STUDIO_KNOWLEDGE_CHUNK_CHARS,
            overlap=settings.STUDIO_KNOWLEDGE_CHUNK_OVERLAP,
            memory_mb=settings.STUDIO_KNOWLEDGE_PARSE_MEMORY_MB,
            seconds=settings.STUDIO_KNOWLEDGE_PARSE_SECONDS,
        )
        before = _resident_mb()
        started = time.perf_counter()
        try:
            reading = read_isolated(job, beat=lambda: None)
            peak, outcome = reading.peak_rss_mb, f"read: {len(reading.drafts)} chunks"
        except ParseError as exc:
            peak, outcome = exc.peak_rss_mb, str(exc)[:90]
        seconds = time.perf_counter() - started
        grew = _resident_mb() - before
        print(
            f"{name:26} {len(content):>9,} {seconds:>7.2f} {peak or 0:>8.0f} {grew:>10.0f}  ",
            end="",
        )
        print(outcome)


def _resident_mb() -> float:
    with open("/proc/self/status") as status:
        for line in status:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return 0.0


if __name__ == "__main__":
    main()
