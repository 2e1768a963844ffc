"""Reads of tools_app."""

from __future__ import annotations

from django.db.models import QuerySet

from tools_app.models import Tool


def tool_list(*, user) -> QuerySet[Tool]:
    return Tool.objects.live().visible_to(user)


def tool_get(*, user, name: str) -> Tool | None:
    return tool_list(user=user).filter(name=name).first()
