"""Pages: /traces/ (the runs list and usage) and /traces/<run>/ (a run's trace). Another
user's run is a 404."""

from __future__ import annotations

from typing import Any

from django.contrib.auth.decorators import login_required
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import render

from agents_core.models import RunStatus
from agents_core.selectors import agent_list
from traces.selectors import run_of_user


@login_required
def runs(request: HttpRequest) -> HttpResponse:
    """The runs list (runs.js, /api/traces/) and usage (usage.js, /api/usage/)."""
    return render(
        request,
        "traces/runs.html",
        {"agents": agent_list(user=request.user), "statuses": RunStatus.choices},
    )


@login_required
def trace(request: HttpRequest, run_id: Any) -> HttpResponse:
    run = run_of_user(user=request.user, run_id=run_id)
    if run is None:
        raise Http404("No such run.")
    return render(request, "traces/trace.html", {"run": run})
