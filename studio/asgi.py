"""ASGI entry point: HTTP through Django, websockets through Channels (served by Daphne)."""

from __future__ import annotations

import os
from typing import Any

from django.core.asgi import get_asgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "studio.settings")

# Django must be set up before consumers (and their models) are imported.
django_asgi_app = get_asgi_application()

from channels.auth import AuthMiddlewareStack  # noqa: E402
from channels.routing import ProtocolTypeRouter, URLRouter  # noqa: E402
from channels.security.websocket import AllowedHostsOriginValidator  # noqa: E402
from django.conf import settings  # noqa: E402

from studio.routing import websocket_urlpatterns  # noqa: E402

http_app: Any = django_asgi_app
if settings.STUDIO_SERVE_STATIC:
    from django.contrib.staticfiles.handlers import ASGIStaticFilesHandler

    http_app = ASGIStaticFilesHandler(django_asgi_app)

from common.body_limit import BodyLimit  # noqa: E402
from studio.health import HealthCheck  # noqa: E402
from tools_app.sources.asgi import SourcesRouter  # noqa: E402

# /mcp/ and /a2a/ are served by the MCP and A2A SDKs' own ASGI apps (tools_app.sources);
# everything else HTTP is Django's; bodies over STUDIO_MAX_BODY_BYTES get 413 before
# Django or an SDK reads them; /healthz is answered first of all (no session, no HTTPS
# redirect, no Host check: studio/health.py).
http_app = HealthCheck(BodyLimit(SourcesRouter(http_app)))

application = ProtocolTypeRouter(
    {
        "http": http_app,
        "websocket": AllowedHostsOriginValidator(
            AuthMiddlewareStack(URLRouter(websocket_urlpatterns))
        ),
    }
)
