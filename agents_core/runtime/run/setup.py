"""What a run needs to know before it starts: the agent as overrides make it, its tools
as the model sees them, the merged options. Loaded from the database (synchronously)."""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import Any

from django.db.models import Exists, OuterRef

from agents_core.models import Agent, AgentTool, Run, SubAgent
from agents_core.registry import get_agent_definition, get_tool_definition
from agents_core.runtime.storage.messages import instruction_messages
from providers.catalog import PROVIDERS, fallback_problems, provider_of
from providers.model_endpoints import (
    call_base,
)
from providers.request import model_settings
from providers.resolve import ModelCall, model_call
from tools_app.models import Source, Tool, ToolKind
from tools_app.types.agent import PROMPT_SCHEMA

SUBAGENT_PARAMETERS = PROMPT_SCHEMA
# A sub-agent's run is bounded by its own max steps; this only ends one that hangs.
SUBAGENT_TIMEOUT_SECONDS = 3600.0
DEFAULT_MAX_STEPS = 10


@dataclass
class ToolSpec:
    name: str  # the binding key, or agent-<key>
    kind: str  # "tool" | "subagent"
    description: str
    parameters: dict[str, Any]
    tool: Any = None
    binding: AgentTool | None = None
    child: Agent | None = None
    definition: Any = None
    requires_approval: bool = False

    @property
    def resume_schema(self) -> dict[str, Any] | None:
        if self.definition is not None and self.definition.resume_schema:
            return self.definition.resume_schema
        if self.tool is not None:
            return (self.tool.config or {}).get("resume_schema")
        return None

    def runnable(self) -> Any:
        """The Tool row run_tool runs: the bound tool, or for a sub-agent an unsaved tool
        of the `agent` type, so that both ways to call an agent run through one path."""
        if self.kind != "subagent":
            return self.tool
        assert self.child is not None  # a sub-agent's spec is made with its agent
        return Tool(
            name=self.name,
            kind=ToolKind.AGENT,
            source=Source.STUDIO,
            input_schema=self.parameters,
            config={"agent": self.child.slug},
            timeout_seconds=SUBAGENT_TIMEOUT_SECONDS,
        )

    @property
    def execution_mode(self) -> str:
        return getattr(self.tool, "execution_mode", "sync") if self.tool is not None else "sync"

    def function(self) -> dict[str, Any]:
        return {
            "type": "function",
            "function": {
                "name": self.name,
                "description": self.description[:1024],
                "parameters": self.parameters or {"type": "object", "properties": {}},
            },
        }


@dataclass
class RunSetup:
    run: Run
    agent: Agent
    thread_id: Any
    user: Any
    instructions: Any
    specs: dict[str, ToolSpec]
    options: dict[str, Any]
    hooks: dict[str, Any] = field(default_factory=dict)
    # How the agent's model is called (key and base from the user's provider credentials).
    model_calls: list[ModelCall] = field(default_factory=list)

    @property
    def max_steps(self) -> int:
        return max(1, int(self.options.get("maxSteps") or DEFAULT_MAX_STEPS))

    def secret_values(self) -> list[Any]:
        """The keys the run's model calls may go out with: each credential's, one the
        agent or the run sets in modelSettings, and the server's own (its environment)
        for a call that no credential covers."""
        values: list[Any] = [call.api_key for call in self.model_calls]
        model_settings = self.options.get("modelSettings")
        if isinstance(model_settings, dict):
            values += [model_settings.get("api_key"), model_settings.get("apiKey")]
        for call in self.model_calls:
            spec = PROVIDERS.get(provider_of(call.requested))
            if not call.credential and spec is not None and spec.env_key:
                values.append(os.environ.get(spec.env_key))
        return values

    def model_kwargs(self, call: ModelCall | None = None) -> dict[str, Any]:
        """litellm's arguments besides the messages, for `call` (the agent's model when
        None): providers/request.py."""
        return model_settings(
            agent=self.agent, options=self.options, run_options=self.run.options, call=call
        )

    def call_kwargs(
        self, call: ModelCall, memory: list[dict[str, Any]], specs: list[ToolSpec], choice: Any
    ) -> dict[str, Any]:
        """Everything litellm is given for `call` (the agent's model or a fallback)."""
        kwargs: dict[str, Any] = {
            "model": call.model,
            "messages": instruction_messages(self.instructions, call.model) + memory,
            "stream": True,
            # Retries are the run's own (providers/fallbacks.py), bounded and visible; the
            # OpenAI SDK under litellm would otherwise retry each call twice on its own.
            "max_retries": 0,
            **self.model_kwargs(call),
        }
        if specs:
            kwargs["tools"] = [spec.function() for spec in specs]
            kwargs["tool_choice"] = choice
        if kwargs["model"].startswith("openai/") or "api_base" in kwargs:
            kwargs["stream_options"] = {"include_usage": True}
        return kwargs

    def active_specs(self) -> list[ToolSpec]:
        active = self.options.get("activeTools")
        specs = list(self.specs.values())
        if active is not None:
            specs = [spec for spec in specs if spec.name in set(active)]
        return specs

    def tool_choice(self) -> Any:
        """ "auto" | "none" | "required" | a tool name | {"type": "tool", "toolName": X}."""
        choice = self.options.get("toolChoice", "auto")
        if isinstance(choice, dict):
            choice = choice.get("toolName") or (choice.get("function") or {}).get("name")
        if choice in (None, "auto", "none", "required"):
            return choice or "auto"
        return {"type": "function", "function": {"name": choice}}


def _fallbacks(options: dict[str, Any]) -> list[str]:
    """The fallback models a run tries after the agent's (well-formed ones: the run checks
    the option before its first call)."""
    value = options.get("fallbacks")
    return value if isinstance(value, list) and not fallback_problems(value) else []


def _code_tool(tool: Any) -> Any:
    return get_tool_definition(tool.name) if tool.source == "code" else None


def load_setup(run_id: Any) -> RunSetup:
    from agents_core.overrides import (
        effective_instructions,
        effective_subagent_bindings,
        effective_subagent_description,
        effective_tool_bindings,
        effective_tool_description,
    )

    # The agent's editor override (one-to-one) comes with it: the effective_* readers
    # below all look at it; and whether it has sub-agents at all (most have none: their
    # query is skipped).
    run = (
        Run.objects.select_related("thread", "agent", "agent__editor_override", "started_by")
        .annotate(
            has_subagents=Exists(
                SubAgent.objects.filter(parent=OuterRef("agent"), child__gone_at__isnull=True)
            )
        )
        .get(id=run_id)
    )
    agent = run.agent
    specs: dict[str, ToolSpec] = {}
    for binding in effective_tool_bindings(agent):
        definition = _code_tool(binding.tool)
        specs[binding.key] = ToolSpec(
            name=binding.key,
            kind="tool",
            description=effective_tool_description(binding),
            parameters=binding.tool.input_schema,
            tool=binding.tool,
            binding=binding,
            definition=definition,
            requires_approval=binding.requires_approval,
        )
    for sub in effective_subagent_bindings(agent) if run.has_subagents else []:
        specs[sub.tool_name] = ToolSpec(
            name=sub.tool_name,
            kind="subagent",
            description=effective_subagent_description(sub),
            parameters=SUBAGENT_PARAMETERS,
            child=sub.child,
        )
    definition = get_agent_definition(agent.slug) if agent.is_code else None
    options = {**(agent.default_options or {}), **(run.options or {})}
    base = call_base(
        metadata=agent.metadata, default_options=agent.default_options, run_options=run.options
    )
    return RunSetup(
        run=run,
        agent=agent,
        thread_id=run.thread_id,
        user=run.started_by,
        instructions=effective_instructions(agent),
        specs=specs,
        options=options,
        hooks=dict(definition.hooks) if definition is not None else {},
        model_calls=[
            model_call(user=run.started_by, model=model, api_base=base)
            for model in [agent.model, *_fallbacks(options)]
        ],
    )
