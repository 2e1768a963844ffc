"""Model fields for values that tools and models produce: what PostgreSQL cannot store is
stored as U+FFFD instead of failing the write.

PostgreSQL refuses U+0000 (NUL) in text and jsonb; a tool's output, a model's text or
arguments, a log line may contain one. The columns that hold such values use these: NUL
is replaced where the value is turned into SQL parameters, whichever query writes it
(create, update, bulk_create). What clients send is refused earlier instead
(common.json_input).
"""

from __future__ import annotations

import json
from typing import Any

from django.db import models

from common.json_input import NUL, REPLACEMENT, replace_nul


class NulFreeJSONEncoder(json.JSONEncoder):
    """A JSONField encoder (`JSONField(encoder=NulFreeJSONEncoder)`) that writes NUL as
    U+FFFD. JSON escapes NUL as \\u0000, so one search of the encoded text decides whether
    the value has to be cleaned and encoded again."""

    def encode(self, o: Any) -> str:
        text = super().encode(o)
        return super().encode(replace_nul(o)) if "\\u0000" in text else text


class _NulFree:
    def get_prep_value(self, value: Any) -> Any:
        value = super().get_prep_value(value)  # type: ignore[misc]
        if isinstance(value, str) and NUL in value:
            return value.replace(NUL, REPLACEMENT)
        return value


class NulFreeTextField(_NulFree, models.TextField):
    """A TextField that stores NUL as U+FFFD."""


class NulFreeCharField(_NulFree, models.CharField):
    """A CharField that stores NUL as U+FFFD."""
