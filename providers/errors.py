"""Readable messages for model failures (a run-error must tell the user what to do)."""

from __future__ import annotations

from tools_app.redaction import redact


class ModelError(Exception):
    """The model call failed; the run ends with run-error and this message."""

    def __init__(self, message: str, code: str = "model_error") -> None:
        super().__init__(message)
        self.message = message
        self.code = code


_HINTS = {
    "AuthenticationError": (
        "auth",
        "The model provider refused the credentials (check the API key, e.g. OPENAI_API_KEY)",
    ),
    "PermissionDeniedError": ("auth", "The model provider denied access"),
    "NotFoundError": ("not_found", "The model provider does not know this model"),
    "RateLimitError": ("rate_limited", "The model provider is rate limiting"),
    "APIConnectionError": ("unreachable", "The model provider could not be reached"),
    "Timeout": ("timeout", "The model provider did not answer in time"),
    "ServiceUnavailableError": ("unavailable", "The model provider is unavailable"),
    "InternalServerError": ("provider_error", "The model provider failed"),
    "BadRequestError": ("bad_request", "The model provider rejected the request"),
    "ContextWindowExceededError": ("context_window", "The conversation is too long for the model"),
    "BadGatewayError": ("provider_error", "The model provider failed (bad gateway)"),
}


def model_error(exc: BaseException, model: str) -> ModelError:
    for cls in type(exc).__mro__:
        if cls.__name__ in _HINTS:
            code, hint = _HINTS[cls.__name__]
            break
    else:
        code, hint = "model_error", "The model call failed"
    # A provider may quote the key it was sent (a 401's body): the run's secrets go first,
    # before the detail is cut (a cut could leave a secret's head standing).
    detail = redact(str(getattr(exc, "message", "") or exc)).strip()
    # litellm prefixes its class path; keep the provider's own words.
    detail = detail.replace("litellm.", "").strip()
    if len(detail) > 600:
        detail = detail[:600] + "…"
    text = f"{hint} ({model})"
    if detail:
        text += f": {detail}"
    return ModelError(text, code)
