from __future__ import annotations

from django.apps import AppConfig


class AgentsCoreConfig(AppConfig):
    default_auto_field = "django.db.models.BigAutoField"
    name = "agents_core"
    verbose_name = "Agents"

    def ready(self) -> None:
        from agents_core import registry
        from agents_core.runtime.execution import active
        from agents_core.runtime.run import plugins
        from agents_core.runtime.run.loop import execute_run
        from agents_core.services.async_tools import tool_run_finished_receiver
        from agents_core.signals.delivery import signals_drain_for_run, signals_on_run_end
        from agents_core.tool_side import AGENT_SIDE
        from providers.gate import allowed_origins
        from tools_app.agent_side import agent_side_install
        from tools_app.signals import tool_run_finished

        # A bad STUDIO_MODEL_API_BASES entry stops the start (ImproperlyConfigured), before
        # code agents are checked against the list.
        allowed_origins()
        registry.connect_sync_on_migrate()
        # Tools reach code definitions, agents and task lists through this (tools_app
        # never imports agents_core).
        agent_side_install(AGENT_SIDE)
        # An async tool call of a chat completes with its ToolRun, in the same transaction.
        tool_run_finished.connect(tool_run_finished_receiver, dispatch_uid="agents_core.async")
        # Runs start runs (sub-agents, the signals a run leaves): the loop and signals are
        # handed to the runtime here rather than imported by it.
        active.set_executor(execute_run)
        plugins.register(before_model_call=signals_drain_for_run, after_run=signals_on_run_end)
