"""The stop a user asks for; a model failure is `providers.errors.ModelError`."""

from __future__ import annotations


class Aborted(Exception):  # noqa: N818 - a stop the user asked for, not an error
    """The run was asked to stop; it ends as aborted, keeping what it produced."""
