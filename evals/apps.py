from __future__ import annotations

from django.apps import AppConfig


class EvalsConfig(AppConfig):
    default_auto_field = "django.db.models.BigAutoField"
    name = "evals"
    verbose_name = "Agent tests"
