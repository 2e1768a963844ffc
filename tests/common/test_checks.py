"""The security checks of the middleware MIDDLEWARE lists as subclasses of Django's."""

from __future__ import annotations

from django.core.checks import run_checks
from django.test import override_settings

from common.checks import subclassed_security_middleware

SECURE = {
    "SECURE_HSTS_SECONDS": 31536000,
    "SECURE_HSTS_INCLUDE_SUBDOMAINS": True,
    "SECURE_HSTS_PRELOAD": True,
    "SECURE_SSL_REDIRECT": True,
    "SECURE_CONTENT_TYPE_NOSNIFF": True,
    "SECURE_REFERRER_POLICY": "same-origin",
    "SECURE_CROSS_ORIGIN_OPENER_POLICY": "same-origin",
    "X_FRAME_OPTIONS": "DENY",
    "CSRF_COOKIE_SECURE": True,
}


def ids(messages) -> set[str]:
    return {message.id for message in messages}


def reported(settings) -> set[str]:
    """What `manage.py check --deploy` reports: every message not silenced."""
    return ids(run_checks(include_deployment_checks=True)) - set(settings.SILENCED_SYSTEM_CHECKS)


def test_the_studio_middleware_counts_as_django_s_own(settings):
    with override_settings(**SECURE):
        assert subclassed_security_middleware(None) == []
        assert not reported(settings) & {
            "security.W001",
            "security.W002",
            "security.W003",
            "common.W001",
            "common.W002",
            "common.W003",
        }


def test_the_checks_that_depend_on_the_middleware_still_run(settings):
    insecure = {**SECURE, "SECURE_HSTS_SECONDS": 0, "X_FRAME_OPTIONS": "SAMEORIGIN"}
    insecure["CSRF_COOKIE_SECURE"] = False
    with override_settings(**insecure):
        found = ids(subclassed_security_middleware(None))
        assert {"security.W004", "security.W019", "security.W016"} <= found
        assert found <= reported(settings)


def test_a_missing_security_middleware_is_reported(settings):
    settings.MIDDLEWARE = [
        path for path in settings.MIDDLEWARE if not path.endswith("CsrfViewMiddleware")
    ]
    with override_settings(**SECURE):
        assert ids(subclassed_security_middleware(None)) == {"common.W003"}
