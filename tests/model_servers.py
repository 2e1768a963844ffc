"""Local model servers for tests, on 127.0.0.1, speaking the real protocols: OpenAI's
chat completions (JSON, or SSE chunks with stream=true) and Anthropic's Messages API (JSON,
or SSE with its named events). Each records what it received (body and headers), checks
the key, and answers from a script: a list of replies, taken in order, the last one kept.

`serve(server)` runs one in a thread of its own (for sync code such as a view calling
litellm.completion); async tests may use `start(server)` on their own event loop.
"""

from __future__ import annotations

import asyncio
import json
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

from aiohttp import web


@dataclass
class Reply:
    text: str = "OK"
    status: int = 200  # another status: the provider's error body with it
    error: str = "Rate limit reached"
    # A tool call after the text: (name, its arguments as JSON text), streamed in pieces.
    tool: tuple[str, str] | None = None
    # Raw SSE text sent after the first text event instead of the rest of the stream (a
    # malformed event, an error event; "" drops the connection there).
    broken: str | None = None
    linger: float = 0.0  # seconds between the stream's end marker and the end of its body

    def pieces(self) -> list[str]:
        """The tool call's arguments in 5-character pieces."""
        arguments = self.tool[1] if self.tool else ""
        return [arguments[i : i + 5] for i in range(0, len(arguments), 5)]


@dataclass
class Received:
    path: str
    headers: dict[str, str]
    body: dict[str, Any]


@dataclass
class ModelServer:
    key: str = "sk-good"
    script: list[Reply] = field(default_factory=lambda: [Reply()])
    requests: list[Received] = field(default_factory=list)
    url: str = ""  # scheme://host:port once started
    origin: str = ""
    # A refused key is quoted in the 401's message, as some providers (and proxies) do.
    quotes_key: bool = False

    def next_reply(self) -> Reply:
        return self.script.pop(0) if len(self.script) > 1 else self.script[0]

    async def handle(self, request: web.Request) -> web.StreamResponse:
        body = await request.json()
        self.requests.append(Received(request.path, dict(request.headers), body))
        if not self.authorized(request):
            message = "Invalid API key"
            if self.quotes_key:
                message = f"Incorrect API key provided: {self.key_received(request)}"
            return self.error_response(401, message, "authentication_error")
        reply = self.next_reply()
        if reply.status != 200:
            return self.error_response(reply.status, reply.error, "rate_limit_error")
        if body.get("stream"):
            response = web.StreamResponse(headers={"Content-Type": "text/event-stream"})
            await response.prepare(request)
            for event in self.events(body, reply):
                await response.write(event.encode())
            await asyncio.sleep(reply.linger)
            if reply.broken == "":  # the connection drops mid-stream
                await asyncio.sleep(0.05)
                request.transport.abort()
            return response
        return web.json_response(self.whole(body, reply))

    # --- per protocol ---
    route = ""

    def authorized(self, request: web.Request) -> bool:
        raise NotImplementedError

    def key_received(self, request: web.Request) -> str:
        raise NotImplementedError

    def error_response(self, status: int, message: str, kind: str) -> web.Response:
        raise NotImplementedError

    def events(self, body: dict[str, Any], reply: Reply) -> list[str]:
        raise NotImplementedError

    def whole(self, body: dict[str, Any], reply: Reply) -> dict[str, Any]:
        raise NotImplementedError


class OpenAIServer(ModelServer):
    route = "/v1/chat/completions"

    def authorized(self, request: web.Request) -> bool:
        return request.headers.get("Authorization") == f"Bearer {self.key}"

    def key_received(self, request: web.Request) -> str:
        return request.headers.get("Authorization", "").removeprefix("Bearer ")

    def error_response(self, status: int, message: str, kind: str) -> web.Response:
        return web.json_response({"error": {"message": message, "type": kind}}, status=status)

    @staticmethod
    def _chunk(model: str, delta: dict[str, Any], finish: str | None = None) -> str:
        data = {
            "id": "chatcmpl-1",
            "object": "chat.completion.chunk",
            "created": 1,
            "model": model,
            "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
        }
        return f"data: {json.dumps(data)}\n\n"

    def events(self, body: dict[str, Any], reply: Reply) -> list[str]:
        model = body["model"]
        out = [self._chunk(model, {"role": "assistant", "content": ""})]
        out += [self._chunk(model, {"content": word}) for word in reply.text.split(" ") if word]
        if reply.broken is not None:
            return [*out[:2], reply.broken]
        if reply.tool:
            start = {"index": 0, "id": "call_1", "type": "function"}
            start["function"] = {"name": reply.tool[0], "arguments": ""}
            out.append(self._chunk(model, {"tool_calls": [start]}))
            out += [
                self._chunk(model, {"tool_calls": [{"index": 0, "function": {"arguments": piece}}]})
                for piece in reply.pieces()
            ]
        out.append(self._chunk(model, {}, "tool_calls" if reply.tool else "stop"))
        if (body.get("stream_options") or {}).get("include_usage"):
            usage = {"prompt_tokens": 5, "completion_tokens": 2, "total_tokens": 7}
            chunk = json.loads(self._chunk(model, {})[6:])
            out.append(f"data: {json.dumps({**chunk, 'choices': [], 'usage': usage})}\n\n")
        return [*out, "data: [DONE]\n\n"]

    def whole(self, body: dict[str, Any], reply: Reply) -> dict[str, Any]:
        return {
            "id": "chatcmpl-1",
            "object": "chat.completion",
            "created": 1,
            "model": body["model"],
            "choices": [
                {
                    "index": 0,
                    "message": {"role": "assistant", "content": reply.text},
                    "finish_reason": "stop",
                }
            ],
            "usage": {"prompt_tokens": 5, "completion_tokens": 1, "total_tokens": 6},
        }


class AnthropicServer(ModelServer):
    route = "/v1/messages"

    def authorized(self, request: web.Request) -> bool:
        return request.headers.get("x-api-key") == self.key

    def key_received(self, request: web.Request) -> str:
        return request.headers.get("x-api-key", "")

    def error_response(self, status: int, message: str, kind: str) -> web.Response:
        return web.json_response(
            {"type": "error", "error": {"type": kind, "message": message}}, status=status
        )

    @staticmethod
    def _event(name: str, data: dict[str, Any]) -> str:
        return f"event: {name}\ndata: {json.dumps({'type': name, **data})}\n\n"

    def _message(self, body: dict[str, Any], content: list[dict[str, Any]]) -> dict[str, Any]:
        return {
            "id": "msg_1",
            "type": "message",
            "role": "assistant",
            "model": body["model"],
            "content": content,
            "stop_reason": None,
            "stop_sequence": None,
            "usage": {"input_tokens": 5, "output_tokens": 1},
        }

    def events(self, body: dict[str, Any], reply: Reply) -> list[str]:
        out = [
            self._event("message_start", {"message": self._message(body, [])}),
            self._event(
                "content_block_start", {"index": 0, "content_block": {"type": "text", "text": ""}}
            ),
        ]
        for word in reply.text.split(" "):
            delta = {"type": "text_delta", "text": word + " "}
            out.append(self._event("content_block_delta", {"index": 0, "delta": delta}))
        if reply.broken is not None:
            return [*out[:3], reply.broken]
        out.append(self._event("content_block_stop", {"index": 0}))
        if reply.tool:
            block = {"type": "tool_use", "id": "toolu_1", "name": reply.tool[0], "input": {}}
            out.append(self._event("content_block_start", {"index": 1, "content_block": block}))
            for piece in reply.pieces():
                delta = {"type": "input_json_delta", "partial_json": piece}
                out.append(self._event("content_block_delta", {"index": 1, "delta": delta}))
            out.append(self._event("content_block_stop", {"index": 1}))
        out += [
            self._event(
                "message_delta",
                {
                    "delta": {
                        "stop_reason": "tool_use" if reply.tool else "end_turn",
                        "stop_sequence": None,
                    },
                    "usage": {"output_tokens": 2},
                },
            ),
            self._event("message_stop", {}),
        ]
        return out

    def whole(self, body: dict[str, Any], reply: Reply) -> dict[str, Any]:
        message = self._message(body, [{"type": "text", "text": reply.text}])
        return {**message, "stop_reason": "end_turn"}


async def start(server: ModelServer) -> web.AppRunner:
    app = web.Application()
    app.router.add_post(server.route, server.handle)
    runner = web.AppRunner(app)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    port = site._server.sockets[0].getsockname()[1]
    server.origin = f"http://127.0.0.1:{port}"
    server.url = server.origin + ("/v1" if isinstance(server, OpenAIServer) else "")
    return runner


@contextmanager
def serve(server: ModelServer) -> Iterator[ModelServer]:
    """Run `server` on an event loop in a thread until the block ends."""
    loop = asyncio.new_event_loop()
    thread = threading.Thread(target=loop.run_forever, daemon=True)
    thread.start()
    runner = asyncio.run_coroutine_threadsafe(start(server), loop).result(10)
    try:
        yield server
    finally:
        asyncio.run_coroutine_threadsafe(runner.cleanup(), loop).result(10)
        loop.call_soon_threadsafe(loop.stop)
        thread.join(10)
        loop.close()
