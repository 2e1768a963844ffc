"""Django's security checks for middleware the studio lists as subclasses.

Django's deploy checks find its security, clickjacking and CSRF middleware by their dotted
paths in MIDDLEWARE; the studio lists subclasses of them instead (studio/middleware.py runs
them on the event loop). Django then reports them missing (security.W001-W003, silenced in
the settings) and skips every check that depends on them (HSTS, nosniff, SSL redirect,
X-Frame-Options DENY, referrer and opener policies, secure CSRF cookie). This check says
which of the three has no subclass listed, and runs Django's dependent checks as if the
ones that do were listed under Django's own paths.
"""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.core.checks import CheckMessage, Tags, register
from django.core.checks import Warning as CheckWarning
from django.core.checks.security import base, csrf
from django.utils.module_loading import import_string

MIDDLEWARE_CHECKS = {
    "django.middleware.security.SecurityMiddleware": (
        "W001",
        [
            base.check_sts,
            base.check_sts_include_subdomains,
            base.check_sts_preload,
            base.check_content_type_nosniff,
            base.check_ssl_redirect,
            base.check_referrer_policy,
            base.check_cross_origin_opener_policy,
        ],
    ),
    "django.middleware.clickjacking.XFrameOptionsMiddleware": ("W002", [base.check_xframe_deny]),
    "django.middleware.csrf.CsrfViewMiddleware": ("W003", [csrf.check_csrf_cookie_secure]),
}


@register(Tags.security, deploy=True)
def subclassed_security_middleware(app_configs: Any, **kwargs: Any) -> list[CheckMessage]:
    # Imported here: django.test's machinery stays out of every process's start-up.
    from django.test.utils import override_settings

    listed = [import_string(path) for path in settings.MIDDLEWARE]
    messages: list[CheckMessage] = []
    present = []
    for path, (code, _) in MIDDLEWARE_CHECKS.items():
        if any(issubclass(cls, import_string(path)) for cls in listed):
            present.append(path)
        else:
            messages.append(
                CheckWarning(f"No subclass of {path} is in MIDDLEWARE.", id=f"common.{code}")
            )
    with override_settings(MIDDLEWARE=[*settings.MIDDLEWARE, *present]):
        for path in present:
            for check in MIDDLEWARE_CHECKS[path][1]:
                messages.extend(check(app_configs))
    return messages
