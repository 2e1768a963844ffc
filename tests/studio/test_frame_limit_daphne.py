"""Websocket frames of every size through a real Daphne (the `serve` command's limits): a
frame under STUDIO_MAX_BODY_BYTES is served, one over it gets the `too_large` error event
on a socket that stays open, up to Daphne's own limit (STUDIO_WEBSOCKET_MAX_MESSAGE_BYTES);
beyond that Daphne fails the connection without reading it."""

from __future__ import annotations

import json

import pytest

from tests.agents_core.runtime.test_run_worker import _session_cookie
from tests.conftest import daphne_process

pytestmark = pytest.mark.django_db(transaction=True)

MIB = 1024 * 1024
LIMIT = 8 * MIB  # the default of STUDIO_MAX_BODY_BYTES


def _exact(size: int) -> str:
    """A JSON object of exactly `size` bytes, its strings under the string limit."""
    head, tail = '{"type": "no-such-thing", "pad": [', "]}"
    piece = '"' + "x" * 100_000 + '"'
    count = (size - len(head) - len(tail)) // (len(piece) + 1)
    frame = head + ",".join([piece] * count) + tail
    return frame + " " * (size - len(frame))  # whitespace after the object is still JSON


def _socket(url: str, cookie: str):
    import websockets.sync.client

    return websockets.sync.client.connect(
        url.replace("http", "ws") + "/ws/tool-runs/",
        additional_headers={"Cookie": cookie, "Origin": url},
        open_timeout=30,
        max_size=None,
    )


def test_frames_over_the_limit_get_the_error_event_through_daphne(owner):
    cookie = _session_cookie(owner)

    with daphne_process() as url, _socket(url, cookie) as ws:
        # Under the limit (and over Daphne's own default of 1 MiB): served as any frame.
        ws.send(_exact(2 * MIB))
        assert json.loads(ws.recv(timeout=60))["code"] == "unknown_type"
        for size in (LIMIT + 1, 12 * MIB, 2 * LIMIT):
            ws.send(_exact(size))
            event = json.loads(ws.recv(timeout=60))
            assert event["type"] == "error" and event["code"] == "too_large", size
            assert str(LIMIT) in event["message"]
        # The socket is still open and serves the next frame.
        ws.send('{"type": "ping"}')
        assert json.loads(ws.recv(timeout=60))["code"] == "unknown_type"


def test_a_frame_over_daphnes_own_limit_closes_the_socket(owner):
    from websockets.exceptions import ConnectionClosed

    cookie = _session_cookie(owner)

    with daphne_process(STUDIO_MAX_BODY_BYTES="65536") as url, _socket(url, cookie) as ws:
        ws.send(_exact(65536 + 1))
        assert json.loads(ws.recv(timeout=60))["code"] == "too_large"
        # Daphne's limit is twice the frame limit by default.
        ws.send(_exact(2 * 65536 + 1))
        # Daphne fails the connection without reading the message (autobahn: 1009, or a
        # dropped connection before the close handshake).
        with pytest.raises(ConnectionClosed) as closed:
            ws.recv(timeout=60)
    assert closed.value.rcvd is None or closed.value.rcvd.code == 1009
