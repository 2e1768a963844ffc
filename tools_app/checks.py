"""System checks of tools_app: a malformed allow-list entry stops `manage.py` commands."""

from __future__ import annotations

from typing import Any

from django.core.checks import Error, register
from django.core.exceptions import ImproperlyConfigured

from tools_app.net import private_networks


@register()
def private_networks_check(app_configs: Any, **kwargs: Any) -> list[Error]:
    try:
        private_networks()
    except ImproperlyConfigured as exc:
        return [Error(str(exc), id="tools_app.E001")]
    return []
