"""Pages. Each view reads through selectors and renders one template."""

from __future__ import annotations

from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render

from agents_core.selectors import agent_list
from tools_app.selectors import tool_list


@login_required
def home(request: HttpRequest) -> HttpResponse:
    return render(
        request,
        "frontend/home.html",
        {"agents": agent_list(user=request.user), "tools": tool_list(user=request.user)},
    )
