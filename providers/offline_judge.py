"""The offline model as an evaluation judge: a deterministic verdict for the judge
requests the evals app sends (its system message starts with JUDGE_MARKER and its last
user message is `{"rubric": str, "answer": str}` as JSON).

The rubric is read as criteria, one per line (or separated by ";", bullets allowed). A
criterion is met when every word of four or more letters or digits in it appears in the
answer, case-insensitively. The score is the share of criteria met; the reply is the
JSON `{"score": float, "reason": str}` a real judge model is asked for.
"""

from __future__ import annotations

import json
import re
from typing import Any

JUDGE_MARKER = "You are an evaluation judge."
_WORD = re.compile(r"[a-z0-9]{4,}")


def criteria(rubric: str) -> list[str]:
    parts = re.split(r"[\n;]+", rubric)
    return [part.strip().lstrip("-*• ").strip() for part in parts if part.strip().lstrip("-*• ")]


def verdict(rubric: str, answer: str) -> dict[str, Any]:
    words = set(_WORD.findall(answer.lower()))
    items = criteria(rubric)
    met = [item for item in items if set(_WORD.findall(item.lower())) <= words]
    missed = [item for item in items if item not in met]
    score = len(met) / len(items) if items else 0.0
    reason = f"{len(met)} of {len(items)} criteria met"
    if missed:
        reason += "; missed: " + "; ".join(missed)
    return {"score": round(score, 4), "reason": reason}


def judge_reply(messages: list[dict[str, Any]]) -> str | None:
    """The judge's answer when `messages` is a judge request, else None."""
    if not messages or not str(messages[0].get("content") or "").startswith(JUDGE_MARKER):
        return None
    try:
        request = json.loads(str(messages[-1].get("content") or ""))
        rubric, answer = str(request["rubric"]), str(request["answer"])
    except (ValueError, KeyError, TypeError):
        return json.dumps({"score": 0.0, "reason": "the judge request was not understood"})
    return json.dumps(verdict(rubric, answer))
