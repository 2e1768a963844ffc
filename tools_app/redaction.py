"""Secrets never leave the place they are used: every secret value the studio decrypts (or
builds, or reads from its environment) for a run or a call is recorded in that run's or
call's `Secrets`, and what the run or call writes down or sends out is redacted by value
before it is stored or sent.

The values come from where they are used, not from a pattern: `tools_app.crypto.decrypt`
adds every value it decrypts (provider keys, tool and source credentials, OAuth tokens,
web search keys) to the `Secrets` of the scope it runs in; the run loop adds the keys its
model calls go out with (a credential's, one an agent or a run sets, the server's own
from the environment); the auth of HTTP-based tools adds what it builds from them (a basic
`user:password` in base64, a fresh OAuth access token). Each value is redacted as it is
and in the encodings it travels in: percent-encoded (query strings, cookies), and escaped
as a JSON string (what stored events and spans hold). A value shorter than MIN_LENGTH is
not recorded: redacting a four-letter word everywhere would garble more than it hides.

The choke points that apply it (docs/security.md, "Secrets in errors, events and traces"):
- a model failure becoming text (providers.errors.model_error) and a run's end
  (runtime.loop), so a run's error and its `run-error` event hold no secret;
- the tool pipeline (tools_app.execution), which redacts an outcome's error, output and
  logs before it is recorded, shown or handed to the model;
- the stream (runtime.events.EventSink and handoff.events_emit_sync), before an event is
  delivered or stored;
- the span writer (traces.writer), before a span is stored (OTLP exports read those);
- logging: a log record factory redacts each record's message and traceback with every
  live scope's values, whatever handler (or test capture) receives it;
- the data migration tools_app 0008, which cleans what was stored before all this.

A scope is a context variable: `secrets_scope()` opens one (or joins the enclosing one, so
a sub-agent's run and the tool calls of a run share their run's), and asyncio tasks and
asgiref's thread hops carry it along.
"""

from __future__ import annotations

import base64
import contextvars
import json
import logging
import threading
import weakref
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from typing import Any
from urllib.parse import quote, quote_plus

MARK = "[redacted]"
MIN_LENGTH = 8
# Fields of decrypted objects that are not secret (an OAuth token's bookkeeping).
NOT_SECRET = frozenset(
    {"token_type", "scope", "expires_at", "expires_in", "username", "client_id", "ca_bundle"}
)

_current: contextvars.ContextVar[Secrets | None] = contextvars.ContextVar(
    "studio_secrets", default=None
)
# Every set in use, for log records made where no scope is current (the database threads);
# the lock keeps a set added by one thread from changing the WeakSet another one lists.
_live: weakref.WeakSet[Secrets] = weakref.WeakSet()
_live_lock = threading.Lock()


def _forms(value: str) -> set[str]:
    """The value as it may appear in text: itself, percent-encoded, JSON-escaped."""
    forms = {value, quote(value, safe=""), quote_plus(value), json.dumps(value)[1:-1]}
    return {form for form in forms if len(form) >= MIN_LENGTH}


class Secrets:
    """The secret values of one run or call, and how to take them out of what it writes."""

    def __init__(self) -> None:
        self._forms: list[str] = []  # longest first: a value inside another goes second
        self._values: set[str] = set()
        with _live_lock:
            _live.add(self)

    def __bool__(self) -> bool:
        return bool(self._forms)

    def add(self, value: Any) -> None:
        if not isinstance(value, str) or len(value) < MIN_LENGTH or value in self._values:
            return
        self._values.add(value)
        self._forms = sorted({*self._forms, *_forms(value)}, key=len, reverse=True)

    def add_all(self, data: Any) -> None:
        """Every string in `data` (a decrypted object), but its NOT_SECRET fields."""
        if isinstance(data, dict):
            for key, item in data.items():
                if key not in NOT_SECRET:
                    self.add_all(item)
        elif isinstance(data, list | tuple):
            for item in data:
                self.add_all(item)
        else:
            self.add(data)

    def forms(self) -> list[str]:
        """Every form looked for, longest first."""
        return list(self._forms)

    def text(self, text: str) -> str:
        for form in self._forms:
            if form in text:
                text = text.replace(form, MARK)
        return text

    def attributes(self, obj: Any, names: Iterable[str]) -> None:
        """Redact the named attributes of `obj` in place."""
        if self._forms:
            for name in names:
                setattr(obj, name, self.value(getattr(obj, name)))

    def value(self, value: Any) -> Any:
        """`value` (JSON-like) with every string redacted; the same object when clean."""
        if not self._forms:
            return value
        if isinstance(value, str):
            return self.text(value)
        if isinstance(value, dict | list):
            encoded = json.dumps(value, default=str)
            cleaned = self.text(encoded)
            return value if cleaned == encoded else json.loads(cleaned)
        return value


@contextmanager
def secrets_scope() -> Iterator[Secrets]:
    """The enclosing scope's Secrets, or a new scope's until the block ends."""
    current = _current.get()
    if current is not None:
        yield current
        return
    secrets = Secrets()
    token = _current.set(secrets)
    try:
        yield secrets
    finally:
        _current.reset(token)


def secrets_current() -> Secrets | None:
    return _current.get()


def secrets_add(*values: Any) -> None:
    """Record values in use in the current scope (nothing outside a scope)."""
    secrets = _current.get()
    if secrets is not None:
        for value in values:
            secrets.add_all(value)


def basic_pair(username: str, password: str) -> str:
    """The base64 of `username:password` a basic Authorization header carries."""
    return base64.b64encode(f"{username}:{password}".encode()).decode()


def basic_credentials(username: str, password: str) -> str:
    """`basic_pair`, recorded as a secret of the current scope with the password."""
    pair = basic_pair(username, password)
    secrets_add(password, pair)
    return pair


def redact(text: str) -> str:
    secrets = _current.get()
    return secrets.text(text) if secrets else text


def redact_value(value: Any) -> Any:
    secrets = _current.get()
    return secrets.value(value) if secrets else value


def redact_events(events: list[dict[str, Any]]) -> None:
    """Redact events in place (their callers keep them: the store numbers them)."""
    secrets = _current.get()
    if not secrets:
        return
    for event in events:
        cleaned = secrets.value(event)
        if cleaned is not event:
            event.clear()
            event.update(cleaned)


def redact_all(values: Iterable[Secrets], text: str) -> str:
    for secrets in values:
        if secrets:
            text = secrets.text(text)
    return text


# --- logging ----------------------------------------------------------------------------
def _redacted_record(record: logging.LogRecord) -> None:
    with _live_lock:
        scopes = list(_live)
    if not any(scopes):
        return
    try:
        message = record.getMessage()
    except Exception:  # noqa: BLE001 - a record that cannot format is left to the handler
        return
    cleaned = redact_all(scopes, message)
    if cleaned != message:
        record.msg, record.args = cleaned, ()
    if record.exc_info and record.exc_info[1] is not None:
        # Formatters use exc_text when it is set: the traceback, redacted, in its place.
        text = logging.Formatter().formatException(record.exc_info)
        record.exc_text = redact_all(scopes, text)


def log_redaction_install() -> None:
    """Every log record made in this process is redacted with every live scope's values
    (idempotent)."""
    factory = logging.getLogRecordFactory()
    if getattr(factory, "redacts", False):
        return

    def make(*args: Any, **kwargs: Any) -> logging.LogRecord:
        record = factory(*args, **kwargs)
        _redacted_record(record)
        return record

    make.redacts = True  # type: ignore[attr-defined]
    logging.setLogRecordFactory(make)
