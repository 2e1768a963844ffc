"""External tool sources: OpenAPI specs, MCP servers and A2A agents (docs/tools.md).

- openapi_spec / openapi: read a spec, import operations as tools, re-import with a diff;
- mcp: register MCP servers, list and pick their tools; mcp_server: the studio's own
  tools served over MCP;
- a2a: add external A2A agents as tools; a2a_server: studio agents served over A2A;
- asgi: the ASGI router studio/asgi.py puts in front of Django for /mcp/ and /a2a/.
"""
