from __future__ import annotations

# The local HTTP server and the bare listener of the engine tests, shared here.
from tests.tools_app.engine.conftest import listener, local_server, system_tool  # noqa: F401
