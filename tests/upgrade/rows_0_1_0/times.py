"""The clock of the 0.1.0 rows: every time is minutes after T0."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

T0 = datetime(2026, 11, 30, 9, 0, tzinfo=UTC)


def at(minutes: float) -> datetime:
    return T0 + timedelta(minutes=minutes)
