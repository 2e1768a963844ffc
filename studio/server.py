"""Daphne as the studio runs it: the `serve` and `runstudio` commands start it here, with
the websocket message limit taken from the settings.

Daphne's own default reads at most 1 MiB per websocket message and fails the connection
(1009) on anything larger, so a frame between that and STUDIO_MAX_BODY_BYTES would never
reach the consumer that answers it (common/websocket.py). Here Daphne reads up to
STUDIO_WEBSOCKET_MAX_MESSAGE_BYTES (twice the frame limit by default): every frame over the
limit up to that size gets the `too_large` error event, and the socket stays open.
"""

from __future__ import annotations

from django.conf import settings


def daphne_arguments(*, host: str, port: int, extra: list[str] | None = None) -> list[str]:
    """The command line of Daphne's CLI for the studio's ASGI application."""
    limit = str(settings.STUDIO_WEBSOCKET_MAX_MESSAGE_BYTES)
    application = settings.ASGI_APPLICATION.replace(".application", ":application")
    return [
        "-b",
        host,
        "-p",
        str(port),
        "--websocket-max-message-size",
        limit,
        "--websocket-max-frame-size",
        limit,
        *(extra or []),
        application,
    ]


def serve(*, host: str, port: int, extra: list[str] | None = None) -> None:
    """Run Daphne in this process until it is stopped."""
    from daphne.cli import CommandLineInterface

    CommandLineInterface().run(daphne_arguments(host=host, port=port, extra=extra))
