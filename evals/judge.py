"""The LLM judge and the similarity measure the runner gives the expectation engine.

The judge calls the configured model through litellm, as the run loop does, with a
rubric and the answer, and reads back `{"score": 0..1, "reason": str}`. The offline model
`studio/scripted` gives deterministic verdicts (providers/offline_judge.py).

Similarity to a reference answer: with STUDIO_EVAL_SIMILARITY_MODEL set, the cosine of
the two texts' vectors from that embedding model, through the knowledge app's embedding
client (negative cosines count as 0); otherwise lexical: the cosine of the two texts'
word-count vectors (words: runs of letters and digits, lower-cased), 1.0 for the same
words in any order, 0.0 for no word in common.
"""

from __future__ import annotations

import json
import math
import re
from collections import Counter
from collections.abc import Callable
from typing import Any

from django.conf import settings

from providers.calls import completion
from providers.resolve import model_call
from tools_app.redaction import Secrets, secrets_scope

JUDGE_SYSTEM = (
    "You are an evaluation judge. You get a JSON object with a rubric and an answer. "
    "Score how well the answer meets the rubric from 0 (not at all) to 1 (fully). "
    'Reply with JSON only: {"score": <number 0..1>, "reason": "<one sentence>"}.'
)


class JudgeError(RuntimeError):
    """The judge model could not be called or did not answer with a score."""


def judge_answer(rubric: str, answer: str, model: str, *, user: Any = None) -> tuple[float, str]:
    """The judge's verdict on `answer`, by `model` called as `user`'s runs call it (their
    provider credentials) through the gate of providers/gate.py: a refused model is a
    JudgeError, and no request is sent. The key is redacted from the error as a run's are
    (tools_app.redaction)."""
    with secrets_scope() as secrets:
        return _judge(rubric, answer, model, user, secrets)


def _judge(rubric: str, answer: str, model: str, user: Any, secrets: Secrets) -> tuple[float, str]:
    call = model_call(user=user, model=model)
    secrets.add(call.api_key)
    if call.refusal:
        raise JudgeError(f"the judge model {model} was not called: {call.refusal}")
    extra = {
        key: value
        for key, value in (("api_key", call.api_key), ("api_base", call.api_base))
        if value
    }
    try:
        response = completion(
            model=call.model,
            messages=[
                {"role": "system", "content": JUDGE_SYSTEM},
                {"role": "user", "content": json.dumps({"rubric": rubric, "answer": answer})},
            ],
            temperature=0,
            **extra,
        )
        text = response.choices[0].message.content or ""
    except Exception as exc:  # noqa: BLE001 - any provider failure is the judge's failure
        # Not chained: the provider's exception may quote the key.
        raise JudgeError(f"the judge model {model} failed: {secrets.text(str(exc))}") from None
    return parse_verdict(text)


def parse_verdict(text: str) -> tuple[float, str]:
    match = re.search(r"\{.*\}", text, re.S)
    try:
        data = json.loads(match.group(0) if match else text)
        score = float(data["score"])
    except (ValueError, KeyError, TypeError) as exc:
        raise JudgeError(f"the judge did not answer with a score: {text[:200]!r}") from exc
    return max(0.0, min(1.0, score)), str(data.get("reason") or "")


_WORD = re.compile(r"[^\W_]+")


def lexical_similarity(reference: str, answer: str) -> float:
    left = Counter(_WORD.findall(reference.lower()))
    right = Counter(_WORD.findall(answer.lower()))
    dot = sum(count * right[word] for word, count in left.items())
    norm = math.sqrt(sum(v * v for v in left.values())) * math.sqrt(
        sum(v * v for v in right.values())
    )
    return dot / norm if norm else 0.0


def embedding_similarity(reference: str, answer: str, *, model: str) -> float:
    from knowledge.embeddings import embed

    left, right = embed([reference, answer], model=model)
    return max(0.0, min(1.0, sum(a * b for a, b in zip(left, right, strict=True))))


def similarity_measure() -> Callable[[str, str], float]:
    """The measure `similar` expectations use, by the settings."""
    model = settings.STUDIO_EVAL_SIMILARITY_MODEL
    if not model:
        return lexical_similarity
    return lambda reference, answer: embedding_similarity(reference, answer, model=model)
