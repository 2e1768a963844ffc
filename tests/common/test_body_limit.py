"""Request bodies over STUDIO_MAX_BODY_BYTES get a JSON 413 before any app reads them:
the ASGI wrapper alone, then a real Daphne serving /mcp/, /a2a/ and /api/."""

from __future__ import annotations

import http.client
import json

import pytest
from rest_framework.authtoken.models import Token

from common.body_limit import BodyLimit
from tests.agents_core.factories import AgentFactory
from tests.conftest import daphne_process

LIMIT = 1000


class BodyReader:
    """An ASGI app that reads the whole body and answers with its length."""

    def __init__(self) -> None:
        self.calls = 0

    async def __call__(self, scope, receive, send) -> None:
        self.calls += 1
        size = 0
        while True:
            message = await receive()
            if message["type"] == "http.disconnect":
                raise OSError("the client went away")  # what an SDK does on a cut body
            size += len(message.get("body", b""))
            if not message.get("more_body"):
                break
        body = json.dumps({"size": size}).encode()
        await send({"type": "http.response.start", "status": 200, "headers": []})
        await send({"type": "http.response.body", "body": body})


async def _call(app, *, chunks: list[bytes], headers: list[tuple[bytes, bytes]]) -> list[dict]:
    messages = [
        {"type": "http.request", "body": chunk, "more_body": i < len(chunks) - 1}
        for i, chunk in enumerate(chunks)
    ]
    sent: list[dict] = []

    async def receive() -> dict:
        return messages.pop(0) if messages else {"type": "http.disconnect"}

    async def send(message: dict) -> None:
        sent.append(message)

    scope = {"type": "http", "method": "POST", "path": "/a2a/x/", "headers": headers}
    await app(scope, receive, send)
    return sent


def _answer(sent: list[dict]) -> tuple[int, dict]:
    start = next(m for m in sent if m["type"] == "http.response.start")
    body = b"".join(m.get("body", b"") for m in sent if m["type"] == "http.response.body")
    return start["status"], json.loads(body)


async def test_a_declared_length_over_the_limit_is_refused_without_calling_the_app():
    reader = BodyReader()
    sent = await _call(
        BodyLimit(reader, limit=LIMIT),
        chunks=[b"x" * 10],
        headers=[(b"content-length", str(100 * 1024 * 1024).encode())],
    )
    status, body = _answer(sent)
    assert status == 413 and body["code"] == "body_too_large" and body["limit"] == LIMIT
    assert reader.calls == 0


async def test_a_chunked_body_over_the_limit_is_cut_and_answered_413():
    reader = BodyReader()
    sent = await _call(BodyLimit(reader, limit=LIMIT), chunks=[b"x" * 600] * 3, headers=[])
    status, body = _answer(sent)
    assert (status, body["code"]) == (413, "body_too_large")
    assert len([m for m in sent if m["type"] == "http.response.start"]) == 1


async def test_a_body_within_the_limit_reaches_the_app_whole():
    reader = BodyReader()
    sent = await _call(
        BodyLimit(reader, limit=LIMIT),
        chunks=[b"x" * 500, b"y" * 500],
        headers=[(b"content-length", b"1000")],
    )
    assert _answer(sent) == (200, {"size": 1000})


# --- through Daphne -------------------------------------------------------------------------
def _post(url: str, path: str, body, headers: dict[str, str]) -> tuple[int, dict]:
    host, port = url.removeprefix("http://").split(":")
    conn = http.client.HTTPConnection(host, int(port), timeout=60)
    chunked = not isinstance(body, bytes)
    conn.request("POST", path, body=body, headers=headers, encode_chunked=chunked)
    response = conn.getresponse()
    data = response.read()
    conn.close()
    assert response.getheader("Content-Type", "").startswith("application/json"), data[:200]
    return response.status, json.loads(data)


@pytest.mark.django_db(transaction=True)
def test_daphne_answers_a_json_413_before_the_sdks_or_django_read_the_body(owner):
    AgentFactory(slug="helper", owner=owner)
    token = Token.objects.create(user=owner).key
    payload = json.dumps({"jsonrpc": "2.0", "id": 1, "params": {"pad": "x" * 200_000}}).encode()
    headers = {
        "Authorization": f"Token {token}",
        "Content-Type": "application/json",
        "Accept": "application/json, text/event-stream",
    }

    answers = {}
    with daphne_process(STUDIO_MAX_BODY_BYTES="65536") as url:
        for path in ("/a2a/helper/", "/mcp/", "/api/agents/"):
            answers[path] = _post(url, path, payload, headers)
            # Without a Content-Length (chunked), the bytes are counted as they arrive.
            pieces = iter([payload[i : i + 16384] for i in range(0, len(payload), 16384)])
            answers[f"{path} chunked"] = _post(url, path, pieces, headers)

    for where, (status, answer) in answers.items():
        assert status == 413, (where, answer)
        assert answer["code"] == "body_too_large" and answer["limit"] == 65536, where
