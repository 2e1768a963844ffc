"""Discovery of code definitions and their idempotent sync into the database.

Discovery imports each installed app's `tools.py` and `agents.py` (and the modules in
settings.STUDIO_CODE_MODULES) and collects the Agent and ToolDefinition objects they
define, plus every tool and sub-agent those agents reach. It runs in AppConfig.ready
(imports only, no queries). The database sync runs after `migrate` and from
`manage.py sync_definitions`; it is idempotent: a definition whose fingerprint did not
change is not written, and a definition removed from code is marked gone (gone_at),
its threads, runs and history kept.
"""

from __future__ import annotations

import importlib
import logging
from dataclasses import dataclass, field

from django.apps import apps
from django.conf import settings
from django.db import transaction
from django.db.models.signals import post_migrate
from django.utils import timezone

from agents_core.definitions import Agent as AgentDefinition
from agents_core.definitions import DefinitionError, ToolDefinition, fingerprint

logger = logging.getLogger(__name__)


@dataclass
class Registry:
    tools: dict[str, ToolDefinition] = field(default_factory=dict)
    agents: dict[str, AgentDefinition] = field(default_factory=dict)

    def add_tool(self, tool: ToolDefinition) -> None:
        existing = self.tools.get(tool.id)
        if existing is not None and existing is not tool:
            raise DefinitionError(f"Two code tools share the id {tool.id!r}.")
        self.tools[tool.id] = tool

    def add_agent(self, agent: AgentDefinition) -> None:
        existing = self.agents.get(agent.id)
        if existing is not None and existing is not agent:
            raise DefinitionError(f"Two code agents share the id {agent.id!r}.")
        if existing is agent:
            return
        self.agents[agent.id] = agent
        for tool in agent.tools.values():
            self.add_tool(tool)
        for child in agent.agents.values():
            self.add_agent(child)

    def collect_module(self, module: object) -> None:
        for value in vars(module).values():
            if isinstance(value, ToolDefinition):
                self.add_tool(value)
            elif isinstance(value, AgentDefinition):
                self.add_agent(value)


_registry: Registry | None = None


def discover_module_names() -> list[str]:
    """The modules discovery imports: each app's `tools` and `agents`, then STUDIO_CODE_MODULES."""
    module_names = [
        f"{config.name}.{name}" for config in apps.get_app_configs() for name in ("tools", "agents")
    ]
    return module_names + list(settings.STUDIO_CODE_MODULES)


def discover() -> Registry:
    """Import definition modules and build the registry (no database access)."""
    registry = Registry()
    for module_name in discover_module_names():
        try:
            module = importlib.import_module(module_name)
        except ModuleNotFoundError as exc:
            if exc.name == module_name:
                continue
            raise
        registry.collect_module(module)
    return registry


def get_registry() -> Registry:
    global _registry
    if _registry is None:
        _registry = discover()
    return _registry


def reset_registry(registry: Registry | None = None) -> Registry:
    """Replace the registry (re-discover when None). Used by sync and by tests."""
    global _registry
    _registry = registry if registry is not None else discover()
    return _registry


def get_tool_definition(name: str) -> ToolDefinition | None:
    return get_registry().tools.get(name)


def get_agent_definition(slug: str) -> AgentDefinition | None:
    return get_registry().agents.get(slug)


@dataclass
class SyncReport:
    created: list[str] = field(default_factory=list)
    updated: list[str] = field(default_factory=list)
    unchanged: list[str] = field(default_factory=list)
    gone: list[str] = field(default_factory=list)

    def __str__(self) -> str:
        return (
            f"created {len(self.created)}, updated {len(self.updated)}, "
            f"unchanged {len(self.unchanged)}, gone {len(self.gone)}"
        )


@transaction.atomic
def definitions_sync(*, registry: Registry | None = None) -> SyncReport:
    """Upsert code tools, agents and their bindings; mark removed ones gone."""
    from agents_core.models import Agent, AgentTool, Source, SubAgent
    from tools_app.models import Tool

    registry = registry or get_registry()
    report = SyncReport()
    now = timezone.now()

    tools_by_name: dict[str, Tool] = {}
    for definition in registry.tools.values():
        tool, status = _sync_tool(definition)
        tools_by_name[definition.id] = tool
        getattr(report, status).append(f"tool:{definition.id}")
    for tool in Tool.objects.filter(source=Source.CODE, gone_at__isnull=True).exclude(
        name__in=list(registry.tools)
    ):
        tool.gone_at = now
        tool.save(update_fields=["gone_at", "updated_at"])
        report.gone.append(f"tool:{tool.name}")

    agents_by_slug: dict[str, Agent] = {}
    changed_agents: list[AgentDefinition] = []
    for definition in registry.agents.values():
        agent, status = _sync_agent(definition)
        agents_by_slug[definition.id] = agent
        getattr(report, status).append(f"agent:{definition.id}")
        if status != "unchanged":
            changed_agents.append(definition)
    for agent in Agent.objects.filter(source=Source.CODE, gone_at__isnull=True).exclude(
        slug__in=list(registry.agents)
    ):
        agent.gone_at = now
        agent.save(update_fields=["gone_at", "updated_at"])
        report.gone.append(f"agent:{agent.slug}")

    # Code-owned bindings follow the code; bindings added in the studio are left alone.
    for definition in changed_agents:
        agent = agents_by_slug[definition.id]
        AgentTool.objects.filter(agent=agent, source=Source.CODE).exclude(
            key__in=list(definition.tools)
        ).delete()
        for position, (key, tool_def) in enumerate(definition.tools.items()):
            AgentTool.objects.update_or_create(
                agent=agent,
                key=key,
                defaults={
                    "tool": tools_by_name[tool_def.id],
                    "source": Source.CODE,
                    "position": position,
                    "requires_approval": tool_def.requires_approval,
                },
            )
        SubAgent.objects.filter(parent=agent, source=Source.CODE).exclude(
            key__in=list(definition.agents)
        ).delete()
        for position, (key, child_def) in enumerate(definition.agents.items()):
            SubAgent.objects.update_or_create(
                parent=agent,
                key=key,
                defaults={
                    "child": agents_by_slug[child_def.id],
                    "source": Source.CODE,
                    "position": position,
                },
            )
    return report


def _sync_tool(definition: ToolDefinition) -> tuple[object, str]:
    from agents_core.models import Source
    from tools_app.models import Tool

    digest = fingerprint(definition.fingerprint_data())
    values = {
        "description": definition.description,
        "kind": definition.kind,
        "input_schema": definition.input_schema,
        "output_schema": definition.output_schema,
        "execution_mode": definition.execution_mode,
        "timeout_seconds": definition.timeout,
        "config": definition.config,
        "source": Source.CODE,
        "owner": None,
        "code_hash": digest,
        "gone_at": None,
    }
    # A code tool is shared: no studio tool of any owner may have its name (lookups by
    # name over what a user sees would find two).
    tool = Tool.objects.filter(name=definition.id, owner__isnull=True).first()
    if tool is None and not Tool.objects.filter(name=definition.id).exists():
        return Tool.objects.create(name=definition.id, **values), "created"
    if tool is None or tool.source != Source.CODE:
        raise DefinitionError(
            f"Code tool {definition.id!r} has the name of a tool created in the studio; "
            "rename one of them."
        )
    if tool.code_hash == digest and tool.gone_at is None:
        return tool, "unchanged"
    for name, value in values.items():
        setattr(tool, name, value)
    tool.save()
    return tool, "updated"


def _sync_agent(definition: AgentDefinition) -> tuple[object, str]:
    from agents_core.models import Agent, Source

    digest = fingerprint(definition.fingerprint_data())
    policy = definition.notification_policy
    values = {
        "name": definition.name,
        "description": definition.description,
        "model": definition.resolved_model(),
        "instructions": definition.instructions,
        "metadata": definition.metadata,
        "default_options": definition.default_options,
        "editor_policy": definition.editor,
        "notification_policy": policy if isinstance(policy, dict) else {},
        "source": Source.CODE,
        "owner": None,
        "code_hash": digest,
        "gone_at": None,
    }
    # A code agent is shared: no studio agent of any owner may have its slug (lookups by
    # slug over what a user sees would find two).
    agent = Agent.objects.filter(slug=definition.id, owner__isnull=True).first()
    if agent is None and not Agent.objects.filter(slug=definition.id).exists():
        return Agent.objects.create(slug=definition.id, **values), "created"
    if agent is None or agent.source != Source.CODE:
        raise DefinitionError(
            f"Code agent {definition.id!r} has the id of an agent created in the studio."
        )
    if agent.code_hash == digest and agent.gone_at is None:
        return agent, "unchanged"
    for name, value in values.items():
        setattr(agent, name, value)
    agent.save()
    return agent, "updated"


def _sync_after_migrate(sender, app_config=None, **kwargs) -> None:  # noqa: ANN001
    # post_migrate fires once per app; sync once, after ours, on the migrated database.
    if app_config is None or app_config.name != "agents_core":
        return
    if kwargs.get("using", "default") != "default":
        return
    report = definitions_sync()
    if kwargs.get("verbosity", 1) >= 1:
        logger.info("Code definitions synced: %s", report)


def connect_sync_on_migrate() -> None:
    post_migrate.connect(_sync_after_migrate, dispatch_uid="agents_core.definitions_sync")
    get_registry()
