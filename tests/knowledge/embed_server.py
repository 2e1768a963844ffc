"""A local OpenAI-compatible embeddings server on 127.0.0.1 (the real protocol litellm
speaks over HTTP), for tests that need a provider's model: vectors are word hashes, and
each request can be made slow so that a worker can be caught mid-ingestion."""

from __future__ import annotations

import hashlib
import json
import math
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

DIM = 64


def hashed_vector(text: str) -> list[float]:
    vector = [0.0] * DIM
    for word in text.lower().split():
        digest = hashlib.md5(word.strip(".,;:!?").encode()).digest()  # noqa: S324
        vector[digest[0] % DIM] += 1.0 if digest[1] % 2 else -1.0
    norm = math.sqrt(sum(x * x for x in vector)) or 1.0
    return [x / norm for x in vector]


class EmbedServer:
    def __init__(self, delay: float = 0.0, quotes_key: bool = False) -> None:
        self.delay = delay
        # Answer 401 quoting the bearer key received, as some providers do.
        self.quotes_key = quotes_key
        self.requests = 0
        self.texts = 0
        self.lock = threading.Lock()


@contextmanager
def embeddings_server(
    delay: float = 0.0, quotes_key: bool = False
) -> Iterator[tuple[str, EmbedServer]]:
    state = EmbedServer(delay, quotes_key)

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args: object) -> None:
            pass

        def do_POST(self) -> None:  # noqa: N802
            body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
            texts = body["input"] if isinstance(body["input"], list) else [body["input"]]
            with state.lock:
                state.requests += 1
                state.texts += len(texts)
            time.sleep(state.delay)
            if state.quotes_key:
                key = self.headers.get("Authorization", "").removeprefix("Bearer ")
                error = {"error": {"message": f"Incorrect API key provided: {key}."}}
                return self._send(401, error)
            self._send(
                200,
                {
                    "object": "list",
                    "model": body.get("model", "fake"),
                    "data": [
                        {"object": "embedding", "index": i, "embedding": hashed_vector(str(t))}
                        for i, t in enumerate(texts)
                    ],
                    "usage": {"prompt_tokens": len(texts), "total_tokens": len(texts)},
                },
            )

        def _send(self, status: int, payload: dict) -> None:
            data = json.dumps(payload).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/v1", state
    finally:
        server.shutdown()
        server.server_close()
