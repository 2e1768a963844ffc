from __future__ import annotations

# The local HTTP server and the bare listener of the engine tests, shared here.
from tests.tools_app.engine.conftest import (  # noqa: F401
    listener,
    local_server,
    make_tool,
    system_tool,
)
