"""An MCP server (the `mcp` SDK, streamable HTTP at /mcp) that requires OAuth as the MCP
authorization spec says: a request without a valid bearer token gets 401 with
`WWW-Authenticate: Bearer resource_metadata="...", scope="..."`, and the server publishes
its Protected Resource Metadata (RFC 9728) naming the local OAuth server
(tests.tools_app.auth.servers) as its authorization server. Tokens are checked against
that server's store: unknown, expired, revoked, or issued for another resource (RFC 8707)
is a 401.
"""

from __future__ import annotations

import json
import time
from typing import Any

from mcp.server.mcpserver import Context
from starlette.responses import JSONResponse, Response

from tests.tools_app.auth.servers import OAuthServer

PRM_PATH = "/.well-known/oauth-protected-resource/mcp"


def mcp_oauth_app(oauth: OAuthServer, *, scope: str = "mcp:tools") -> Any:
    from mcp.server.mcpserver import MCPServer

    server = MCPServer("oauth-tools")

    @server.tool(description="Who the bearer token belongs to.")
    def whoami(ctx: Context) -> str:
        token = (ctx.headers or {}).get("authorization", "")[7:]
        return oauth.access[token]["sub"]

    @server.tool(description="Add two integers.")
    def add(a: int, b: int) -> int:
        return a + b

    return RequireOAuth(server.streamable_http_app(json_response=True), oauth, scope=scope)


class RequireOAuth:
    """ASGI middleware in front of the MCP app; `documents` (path -> JSON) are served
    as they are, e.g. the resource metadata, which a test may replace or remove."""

    def __init__(self, app: Any, oauth: OAuthServer, *, scope: str) -> None:
        self.app, self.oauth, self.scope = app, oauth, scope
        self.documents: dict[str, Any] = {}
        self.challenge_metadata = True  # name the metadata in the 401's challenge
        self.seen: list[str] = []  # the subject of every accepted request

    def base(self, scope: dict[str, Any]) -> str:
        host = dict(scope["headers"]).get(b"host", b"").decode()
        return f"http://{host}"

    def metadata(self, base: str) -> dict[str, Any]:
        return {
            "resource": f"{base}/mcp",
            "authorization_servers": [self.oauth.url],
            "scopes_supported": ["mcp:tools", "mcp:extra"],
            "bearer_methods_supported": ["header"],
        }

    async def __call__(self, scope: dict, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            return await self.app(scope, receive, send)
        base = self.base(scope)
        if scope["path"] in self.documents or scope["path"] == PRM_PATH:
            document = self.documents.get(scope["path"], self.metadata(base))
            if document is None:
                return await Response("no such document", 404)(scope, receive, send)
            body = document if isinstance(document, bytes) else json.dumps(document).encode()
            return await Response(body, media_type="application/json")(scope, receive, send)
        token = dict(scope["headers"]).get(b"authorization", b"").decode()[7:]
        entry = self.oauth.access.get(token)
        if (
            entry is None
            or entry["revoked"]
            or entry["exp"] < time.time()
            or entry["resource"] != f"{base}/mcp"
        ):
            challenge = f'Bearer error="invalid_token", scope="{self.scope}"'
            if self.challenge_metadata:
                challenge += f', resource_metadata="{base}{PRM_PATH}"'
            response = JSONResponse({"error": "invalid_token"}, 401)
            response.headers["WWW-Authenticate"] = challenge
            return await response(scope, receive, send)
        self.seen.append(entry["sub"])
        return await self.app(scope, receive, send)
