"""Pages. Each view reads through selectors and renders one template."""

from __future__ import annotations

from django.conf import settings
from django.contrib.auth.decorators import login_required
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import render
from django.urls import reverse

from agents_core.selectors import agent_get, agent_list, thread_for
from common.exceptions import NotFound
from tools_app.selectors import tool_get, tool_list


@login_required
def home(request: HttpRequest) -> HttpResponse:
    from agents_core.editor.selectors import agents_open_to_tool_changes

    agents = agent_list(user=request.user)
    return render(
        request,
        "frontend/home.html",
        {
            "agents": agents,
            "tools": tool_list(user=request.user),
            # "Add tool" shows only where the API would take the change (editor policy).
            "tools_open": agents_open_to_tool_changes(user=request.user, agents=agents),
        },
    )


def _chat_agents(user) -> list[dict]:
    """What the chat page's agent picker shows, as JSON for chat.js."""
    return [
        {
            "slug": agent.slug,
            "name": agent.name,
            "model": agent.model,
            "source": agent.source,
            "description": agent.description,
            "tools": [binding.key for binding in agent.tool_bindings.all()],
            # The chat renders some results by the tool's kind (knowledge_search: citations).
            "toolKinds": {binding.key: binding.tool.kind for binding in agent.tool_bindings.all()},
            "subagents": [sub.tool_name for sub in agent.subagent_bindings.all()],
            "defaultOptions": agent.default_options,
        }
        for agent in agent_list(user=user)
    ]


@login_required
def chat(
    request: HttpRequest, agent_slug: str | None = None, thread_id: str | None = None
) -> HttpResponse:
    """The preview chat: /chat/, /chat/<agent>/ (new thread) and /chat/t/<thread>/."""
    thread = None
    if thread_id is not None:
        # Another user's thread, like a missing one, is not found.
        try:
            thread = thread_for(request.user, thread_id)
        except NotFound:
            raise Http404("No such thread.") from None
        agent_slug = thread.agent.slug
    elif agent_slug is not None and agent_get(user=request.user, slug=agent_slug) is None:
        raise Http404("No such agent.")
    return render(
        request,
        "frontend/chat.html",
        {
            "agents": _chat_agents(request.user),
            "agent_slug": agent_slug or "",
            "thread": thread,
        },
    )


@login_required
def agent_new(request: HttpRequest) -> HttpResponse:
    """Create an agent: from scratch, a template, a duplicate or an import (agent_new.js)."""
    agents = agent_list(user=request.user)
    duplicate = request.GET.get("duplicate", "")
    config = {
        "duplicate": duplicate if agents.filter(slug=duplicate).exists() else "",
        "urls": {
            "agents": reverse("agent-list"),
            "templates": reverse("agent-templates"),
            "import": reverse("agent-import"),
            "duplicate": reverse("agent-duplicate", kwargs={"slug": "__slug__"}),
            "edit": reverse("frontend:agent-edit", kwargs={"slug": "__slug__"}),
        },
    }
    context = {
        "agents": agents,
        "page_config": config,
        "default_model": settings.STUDIO_DEFAULT_MODEL,
    }
    return render(request, "frontend/agent_new.html", context)


@login_required
def agent_edit(request: HttpRequest, slug: str) -> HttpResponse:
    """The agent editor: agent_edit.js loads and saves through /api/agents/<slug>/overrides/."""
    from agents_core.editor.selectors import editor_page_config

    agent = agent_get(user=request.user, slug=slug)
    if agent is None:
        raise Http404("No such agent.")
    config = editor_page_config(agent=agent, user=request.user)
    return render(request, "frontend/agent_edit.html", {"agent": agent, "editor_config": config})


@login_required
def tools(request: HttpRequest, tool_name: str = "", view: str = "index") -> HttpResponse:
    """The tool panel: list, tool page with its test console, create and edit forms.

    tools.js renders each view from the API; the server only checks the tool exists so
    that a mistyped URL gets a real 404.
    """
    if tool_name and tool_get(user=request.user, name=tool_name) is None:
        raise Http404("No such tool.")
    return render(request, "frontend/tools.html", {"tool_name": tool_name, "view": view})


@login_required
def sources(request: HttpRequest) -> HttpResponse:
    """Tool sources: OpenAPI import, MCP servers, A2A agents (sources.js drives the API)."""
    return render(request, "frontend/sources.html")


@login_required
def connectors(request: HttpRequest) -> HttpResponse:
    """The connector catalogue: pick a connector, connect it, add its operations as tools
    (connectors.js drives /api/connectors/)."""
    return render(request, "frontend/connectors.html")


@login_required
def settings_page(request: HttpRequest) -> HttpResponse:
    """Settings → Web search; settings.js renders it from /api/settings/web-search/."""
    return render(request, "frontend/settings.html")
