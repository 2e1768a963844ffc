"""The offline model as a thread titler: a deterministic title for the title requests
agents_core.services.thread_titles sends (its system message starts with TITLE_MARKER and
its user message is the exchange, `User: <message>` then `Assistant: <answer>`).

The title is the first few words of the user's message that carry its subject (stop words
and greetings left out), capitalised; the answer's words when the message has none.
"""

from __future__ import annotations

import re
from typing import Any

TITLE_MARKER = "You title conversations."
ANSWER_LABEL = "\n\nAssistant: "
TITLE_WORDS = 5
_WORD = re.compile(r"[^\W_][\w'-]*")
_STOP = frozenset(
    """a about after again all also am an and any are as at be because been before being
    but by can could did do does for from get give had has have hello help hey hi how i if
    in into is it its just know let like me more most my no not now of ok okay on or our
    please say should so some tell than thank thanks that the their them then there these
    they this to up us want was we were what when where which who why will with would you
    your""".split()
)


def title_of(text: str) -> str:
    words: list[str] = []
    for word in _WORD.findall(text):
        if word.lower() in _STOP or word.lower() in (w.lower() for w in words):
            continue
        words.append(word if word[:1].isupper() else word.capitalize())
        if len(words) == TITLE_WORDS:
            break
    return " ".join(words)


def title_reply(messages: list[dict[str, Any]]) -> str | None:
    """The title when `messages` is a title request, else None."""
    if not messages or not str(messages[0].get("content") or "").startswith(TITLE_MARKER):
        return None
    exchange = str(messages[-1].get("content") or "")
    question, _, answer = exchange.removeprefix("User: ").partition(ANSWER_LABEL)
    return title_of(question) or title_of(answer) or "New conversation"
