"""Test settings for a Daphne process that must reach test servers on 127.0.0.1 (the
browser test runs imported OpenAPI tools from the studio server against them)."""

from studio.settings_test import *  # noqa: F403

STUDIO_ALLOW_LOOPBACK_FETCH = True
