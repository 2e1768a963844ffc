"""The admin's JSON fields, held to the limits of all JSON from outside (common.json_input).

Django's form JSONField reads the posted text with `json.loads`: a document nested
100,000 deep raises RecursionError (a 500, also when the form is shown again), and an
escaped NUL passes until PostgreSQL refuses it. Here both are form errors, with the
JSON path of the first offence.
"""

from __future__ import annotations

from typing import Any

from django import forms
from django.contrib import admin
from django.core.exceptions import ValidationError
from django.db import models
from django.forms.fields import InvalidJSONInput, JSONString

from common.json_input import JSONInputError, json_loads


class JSONInputField(forms.JSONField):
    def to_python(self, value: Any) -> Any:
        if self.disabled:
            return value
        if value in self.empty_values:
            return None
        if isinstance(value, list | dict | int | float | JSONString):
            return value
        try:
            converted = json_loads(value, max_string_chars=0)
        except JSONInputError as exc:
            raise ValidationError(exc.message, code="invalid") from None
        return JSONString(converted) if isinstance(converted, str) else converted

    def bound_data(self, data: Any, initial: Any) -> Any:
        if self.disabled:
            return initial
        if data is None:
            return None
        try:
            return json_loads(data, max_string_chars=0)
        except JSONInputError:
            return InvalidJSONInput(data)


class StudioModelAdmin(admin.ModelAdmin):
    """A ModelAdmin whose JSON fields are JSONInputFields."""

    formfield_overrides = {models.JSONField: {"form_class": JSONInputField}}
