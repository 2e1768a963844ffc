"""The two ways an outbound request can fail before or during the exchange."""

from __future__ import annotations


class BlockedURL(ValueError):
    """The URL, its host name or one of its addresses is refused; the message says why."""


class FetchError(Exception):
    """The request could not complete (name lookup, connection, TLS, deadline, redirects)."""
