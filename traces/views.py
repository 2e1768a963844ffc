"""Pages: /traces/ (the runs list and usage), /traces/<run>/ (a run's trace) and
/traces/tool-runs/<tool run>/ (a console tool run's trace). Another user's run is a 404."""

from __future__ import annotations

from typing import Any

from django.contrib.auth.decorators import login_required
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import render

from agents_core.models import RunStatus
from agents_core.selectors import agent_list
from traces.selectors import console_run_of_user, run_of_user


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


@login_required
def tool_run_trace(request: HttpRequest, tool_run_id: Any) -> HttpResponse:
    """The trace of a tool run from the test console: its one tool span."""
    tool_run = console_run_of_user(user=request.user, tool_run_id=tool_run_id)
    if tool_run is None:
        raise Http404("No such tool run.")
    return render(request, "traces/trace.html", {"tool_run": tool_run})
