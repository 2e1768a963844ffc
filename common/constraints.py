"""Constraints that several apps' models share."""

from __future__ import annotations

from django.db import models


def unique_per_owner(field: str, *, prefix: str, what: str) -> list[models.UniqueConstraint]:
    """`field` unique among one owner's rows, and among the shared rows (no owner): another
    owner's rows never make a value taken, so no answer reveals that they exist."""
    return [
        models.UniqueConstraint(
            fields=[field],
            condition=models.Q(owner__isnull=True),
            name=f"{prefix}_shared_{field}_unique",
            violation_error_message=f"This {field} is taken by a shared {what}.",
        ),
        models.UniqueConstraint(
            fields=["owner", field],
            name=f"{prefix}_owner_{field}_unique",
            violation_error_message=f"This {field} is taken by another of your {what}s.",
        ),
    ]
