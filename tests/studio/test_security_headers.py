"""Security headers on every kind of page: a Content-Security-Policy that allows nothing
inline (that no page breaks it: test_security_headers_browser.py), nosniff, the referrer and
opener policies, no framing; HTTPS settings for production."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from django.test import Client

from agents_core.models import Agent

ROOT = Path(__file__).resolve().parents[2]
CSP = (
    "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
    "font-src 'self'; connect-src 'self'; object-src 'none'; base-uri 'none'; "
    "form-action 'self'; frame-ancestors 'none'"
)
HEADERS = {
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "same-origin",
    "Cross-Origin-Opener-Policy": "same-origin",
    "X-Frame-Options": "DENY",
}


def pages(rows) -> dict[str, str]:
    """One URL of each kind of page the studio serves."""
    agent, tool = rows["agent"], rows["tool"]
    code_agent = Agent.objects.get(slug="weather-assistant")
    locked = Agent.objects.get(slug="locked-probe")
    return {
        "home": "/",
        "chat": "/chat/weather-assistant/",
        "agent editor": "/agents/weather-assistant/edit/",
        "tool list": "/tools/",
        "tool form": "/tools/new/",
        "tool console": "/tools/weather_lookup/",
        "tool edit": f"/tools/{tool.name}/edit/",
        "sources": "/sources/",
        "API docs": "/api/docs/",
        "browsable API": "/api/agents/",
        "admin index": "/admin/",
        "admin list": "/admin/agents_core/agent/",
        "admin code agent": f"/admin/agents_core/agent/{code_agent.pk}/change/",
        "admin studio agent": f"/admin/agents_core/agent/{agent.pk}/change/",
        "admin read-only agent": f"/admin/agents_core/agent/{locked.pk}/change/",
        "admin add agent": "/admin/agents_core/agent/add/",
        "admin tool": f"/admin/tools_app/tool/{tool.pk}/change/",
    }


def directives(policy: str) -> dict[str, list[str]]:
    """A policy as {directive: sources}; django-csp writes the directives in any order."""
    parsed = {}
    for part in policy.split(";"):
        name, *sources = part.split()
        parsed[name] = sources
    return parsed


# --- the headers --------------------------------------------------------------------------
@pytest.mark.django_db
def test_every_kind_of_page_carries_the_security_headers(studio_rows, owner):
    client = Client()
    assert client.get("/accounts/login/").status_code == 200
    responses = {
        "login": client.get("/accounts/login/"),
        "admin login": client.get("/admin/login/"),
    }
    client.force_login(owner)
    for name, url in pages(studio_rows).items():
        responses[name] = client.get(url, HTTP_ACCEPT="text/html")
    responses["API docs script"] = client.get("/api/docs/?script=")
    responses["API (JSON)"] = client.get("/api/agents/", HTTP_ACCEPT="application/json")

    for name, response in responses.items():
        assert response.status_code == 200, name
        assert directives(response.headers["Content-Security-Policy"]) == directives(CSP), name
        for header, value in HEADERS.items():
            assert response.headers.get(header) == value, (name, header)
        # Plain HTTP by default: no HSTS, no redirect.
        assert "Strict-Transport-Security" not in response.headers, name
    assert responses["API docs script"].headers["Content-Type"].startswith("application/javascript")


@pytest.mark.django_db
def test_https_settings_redirect_and_send_hsts(client, settings):
    settings.SECURE_SSL_REDIRECT = True
    settings.SECURE_HSTS_SECONDS = 3600
    settings.SECURE_HSTS_INCLUDE_SUBDOMAINS = True

    plain = client.get("/accounts/login/")
    secure = client.get("/accounts/login/", secure=True)

    assert plain.status_code == 301
    assert plain.headers["Location"] == "https://testserver/accounts/login/"
    assert secure.status_code == 200
    assert secure.headers["Strict-Transport-Security"] == "max-age=3600; includeSubDomains"


def read_settings(**env: str) -> subprocess.CompletedProcess:
    program = (
        "from django.conf import settings; "
        "print(settings.SECURE_SSL_REDIRECT, settings.SECURE_HSTS_SECONDS, "
        "settings.SESSION_COOKIE_SECURE, settings.CSRF_COOKIE_SECURE, "
        "getattr(settings, 'SECURE_PROXY_SSL_HEADER', None))"
    )
    clean = {k: v for k, v in os.environ.items() if not k.startswith(("SECURE_", "SESSION_"))}
    clean.update(DJANGO_SETTINGS_MODULE="studio.settings_test", PYTHONPATH=str(ROOT), **env)
    return subprocess.run(
        [sys.executable, "-c", program], cwd=ROOT, env=clean, capture_output=True, text=True
    )


def test_the_https_settings_are_read_from_the_environment():
    default = read_settings()
    production = read_settings(
        SECURE_SSL_REDIRECT="1",
        SECURE_HSTS_SECONDS="31536000",
        SECURE_PROXY_SSL_HEADER="HTTP_X_FORWARDED_PROTO:https",
    )
    broken = read_settings(SECURE_PROXY_SSL_HEADER="X-Forwarded-Proto")

    assert default.stdout.split() == ["False", "0", "False", "False", "None"], default.stderr
    assert production.stdout.strip() == (
        "True 31536000 True True ('HTTP_X_FORWARDED_PROTO', 'https')"
    ), production.stderr
    assert broken.returncode != 0
    assert "SECURE_PROXY_SSL_HEADER must look like HTTP_X_FORWARDED_PROTO:https" in broken.stderr
