"""Opening a model stream with retries and fallbacks.

The agent's model is tried first, then each model of `fallbacks` (default options or run
options) in order. Each one is retried on what may pass (a rate limit, a 5xx, a connection
error or a timeout), at most `settings.STUDIO_MODEL_RETRIES` times with a backoff doubling
from `settings.STUDIO_MODEL_RETRY_BACKOFF` seconds; what will not pass by waiting (a bad key,
an unknown model, a refused request) ends the run at once. Only the opening of the stream
is retried: once the first chunk has arrived the answer is being shown, and a failure after
it ends the run.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from typing import Any

from django.conf import settings

from providers.errors import ModelError, model_error
from providers.resolve import ModelCall

logger = logging.getLogger(__name__)

# model_error codes worth another try, of the same model or the next one.
RETRYABLE = frozenset({"rate_limited", "unavailable", "provider_error", "unreachable", "timeout"})


async def open_stream(
    litellm: Any, calls: list[ModelCall], kwargs_for: Callable[[ModelCall], dict[str, Any]]
) -> tuple[Any, ModelCall]:
    """(litellm's stream, the call that opened it), for `calls` (never empty) tried in
    order. `kwargs_for(call)` gives a call's arguments; a ModelError from it (a refused
    base, an unknown option) ends the run: it is configuration, not a passing failure."""
    retries = max(0, int(settings.STUDIO_MODEL_RETRIES))
    backoff = max(0.0, float(settings.STUDIO_MODEL_RETRY_BACKOFF))
    failures: list[ModelError] = []
    for call in calls:
        kwargs = kwargs_for(call)
        for attempt in range(retries + 1):
            if attempt:
                await asyncio.sleep(backoff * 2 ** (attempt - 1))
            try:
                return await litellm.acompletion(**kwargs), call
            except Exception as exc:  # noqa: BLE001 - sorted by model_error just below
                error = model_error(exc, call.requested)
                if error.code not in RETRYABLE:
                    raise error from exc
                failures.append(error)
        logger.info("Model %s failed (%s); trying the next", call.requested, failures[-1].code)
    last = failures[-1]
    if len(calls) > 1:
        tried = ", ".join(call.requested for call in calls)
        raise ModelError(f"Every model failed ({tried}); the last: {last.message}", last.code)
    raise last
