"""Shapes of the agents API: agents, their tool bindings and their sub-agent bindings.

Input serializers check each field on its own; rules that need the database (a slug or
key already taken, which tools a user may bind, sub-agent cycles) live in
agents_core.services.agents.
"""

from __future__ import annotations

import re
from typing import Any

from django.conf import settings
from rest_framework import serializers

from agents_core.definitions import (
    SLUG,
    DefinitionError,
    valid_model_string,
    validate_instructions,
)
from agents_core.models import Agent, AgentTool, SubAgent
from providers.catalog import fallback_problems
from providers.model_endpoints import agent_model_errors
from providers.options import call_option_problems

# What the model APIs accept as a tool (function) name.
BINDING_KEY = re.compile(r"^[a-zA-Z0-9_-]{1,64}$")
BINDING_KEY_MESSAGE = "Use 1 to 64 letters, digits, _ or - (the tool name the model sees)."
# A sub-agent is the tool `agent-<key>`, which must itself be a valid tool name.
SUBAGENT_KEY = re.compile(r"^[a-zA-Z0-9_-]{1,58}$")
SUBAGENT_KEY_MESSAGE = (
    "Use 1 to 58 letters, digits, _ or -: the model sees the sub-agent as the tool "
    "agent-<key>, at most 64 characters."
)
TOOL_CHOICES = ("auto", "none", "required")
# The most thread messages an agent's `lastMessages` may give the model.
MEMORY_MAX = 1000
# The largest position a binding's PositiveIntegerField column holds.
POSITION_MAX = 2**31 - 1


def _default_model() -> str:
    return settings.STUDIO_DEFAULT_MODEL


def _json_object(value: Any, field: str) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise serializers.ValidationError(f"{field} must be a JSON object.")
    return value


def default_options_problems(options: dict[str, Any]) -> list[str]:
    """Type checks of the options the run loop reads; other keys pass through."""
    problems = []
    max_steps = options.get("maxSteps")
    if max_steps is not None and not (
        isinstance(max_steps, int) and not isinstance(max_steps, bool) and 1 <= max_steps <= 100
    ):
        problems.append("$.maxSteps: must be a whole number from 1 to 100.")
    temperature = options.get("temperature")
    if temperature is not None and not (
        isinstance(temperature, int | float)
        and not isinstance(temperature, bool)
        and 0 <= temperature <= 2
    ):
        problems.append("$.temperature: must be a number from 0 to 2.")
    tool_choice = options.get("toolChoice")
    if (
        tool_choice is not None
        and tool_choice not in TOOL_CHOICES
        and not (
            isinstance(tool_choice, dict)
            and tool_choice.get("type") == "tool"
            and isinstance(tool_choice.get("toolName"), str)
        )
    ):
        problems.append(
            "$.toolChoice: must be 'auto', 'none', 'required' or "
            '{"type": "tool", "toolName": "<key>"}.'
        )
    active = options.get("activeTools")
    if active is not None and not (
        isinstance(active, list) and all(isinstance(key, str) for key in active)
    ):
        problems.append("$.activeTools: must be a list of tool keys.")
    last_messages = options.get("lastMessages")
    if last_messages is not None and not (
        isinstance(last_messages, int)
        and not isinstance(last_messages, bool)
        and 1 <= last_messages <= MEMORY_MAX
    ):
        problems.append(f"$.lastMessages: must be a whole number from 1 to {MEMORY_MAX}.")
    if "generateTitle" in options and not isinstance(options["generateTitle"], bool):
        problems.append("$.generateTitle: must be true or false.")
    if "modelSettings" in options and not isinstance(options["modelSettings"], dict):
        problems.append("$.modelSettings: must be a JSON object.")
    auto_resume = options.get("autoResume")
    if auto_resume is not None and not isinstance(auto_resume, bool):
        problems.append("$.autoResume: must be true or false.")
    problems += call_option_problems(options.get("providerOptions"))
    problems += fallback_problems(options.get("fallbacks"))
    return problems


class AgentInputSerializer(serializers.Serializer):
    """A studio agent as a client creates or replaces it (PATCH: any subset)."""

    slug = serializers.CharField(
        max_length=100, help_text="The agent's id: a-z, 0-9, - and _; cannot change later."
    )
    name = serializers.CharField(max_length=200)
    description = serializers.CharField(allow_blank=True, required=False, default="")
    model = serializers.CharField(
        max_length=200,
        required=False,
        default=_default_model,
        help_text="provider/model, e.g. openai/gpt-4o-mini or studio/scripted.",
    )
    instructions = serializers.JSONField(
        required=False,
        default="",
        help_text="A string, a list of strings, a system message {role, content, "
        "providerOptions} or a list of system messages.",
    )
    metadata = serializers.JSONField(required=False, default=dict)
    default_options = serializers.JSONField(
        required=False,
        default=dict,
        help_text="maxSteps, toolChoice, activeTools, temperature, autoResume, modelSettings, "
        "providerOptions, fallbacks, lastMessages (how many thread messages the model sees), "
        "generateTitle.",
    )
    notification_policy = serializers.JSONField(required=False, default=dict)

    def validate_slug(self, value: str) -> str:
        if self.instance is not None and value != self.instance.slug:
            raise serializers.ValidationError(
                "An agent's slug is its id and cannot change; create a new agent instead."
            )
        if not SLUG.match(value):
            raise serializers.ValidationError(
                "Use lowercase letters, digits, - and _, starting with a letter or digit "
                "(for example trip-planner)."
            )
        return value

    def validate_model(self, value: str) -> str:
        if not valid_model_string(value):
            raise serializers.ValidationError(
                f"{value!r} is not a model string: use provider/model, "
                "for example openai/gpt-4o-mini or studio/scripted."
            )
        return value

    def validate_instructions(self, value: Any) -> Any:
        try:
            return validate_instructions(value)
        except DefinitionError as exc:
            raise serializers.ValidationError(str(exc)) from exc

    def validate_metadata(self, value: Any) -> dict[str, Any]:
        return _json_object(value, "metadata")

    def validate_notification_policy(self, value: Any) -> dict[str, Any]:
        return _json_object(value, "notification_policy")

    def validate_default_options(self, value: Any) -> dict[str, Any]:
        problems = default_options_problems(_json_object(value, "default_options"))
        if problems:
            raise serializers.ValidationError(problems)
        return value

    def validate(self, attrs: dict[str, Any]) -> dict[str, Any]:
        # Where the model is called is judged on the three fields together (a PATCH of one
        # with the saved others); a save that changes none of them is not held up by them.
        names = ("model", "metadata", "default_options")
        if not any(name in attrs for name in names):
            return attrs
        config = {
            name: attrs[name] if name in attrs else getattr(self.instance, name) for name in names
        }
        errors = agent_model_errors(**config)
        if errors:
            raise serializers.ValidationError(errors)
        return attrs


class AgentUpdateInputSerializer(AgentInputSerializer):
    """PUT and PATCH: the URL names the agent, so the slug may be left out."""

    slug = serializers.CharField(
        max_length=100, required=False, help_text="The agent's id; it cannot change."
    )


class BindingInputSerializer(serializers.Serializer):
    """What every binding takes; each kind adds the field that names its target and its own
    key rule (agents_core.services.bindings)."""

    key_pattern = BINDING_KEY
    key_message = BINDING_KEY_MESSAGE

    description_override = serializers.CharField(allow_blank=True, required=False, default="")
    position = serializers.IntegerField(
        min_value=0,
        max_value=POSITION_MAX,
        required=False,
        help_text="Order among the agent's bindings of this kind (default: last).",
    )

    def validate_key(self, value: str) -> str:
        if not self.key_pattern.match(value):
            raise serializers.ValidationError(self.key_message)
        return value


class ToolBindingInputSerializer(BindingInputSerializer):
    tool = serializers.CharField(max_length=64, help_text="The name of the tool to bind.")
    key = serializers.CharField(
        max_length=64,
        required=False,
        help_text="The tool name the model sees; defaults to the tool's name.",
    )
    requires_approval = serializers.BooleanField(required=False, default=False)


class SubAgentInputSerializer(BindingInputSerializer):
    key_pattern = SUBAGENT_KEY
    key_message = SUBAGENT_KEY_MESSAGE

    agent = serializers.CharField(max_length=100, help_text="The slug of the sub-agent.")
    key = serializers.CharField(
        max_length=58,
        required=False,
        help_text="The model sees the sub-agent as the tool agent-<key>; defaults to its slug.",
    )


class ToolBindingOutputSerializer(serializers.ModelSerializer):
    tool = serializers.CharField(source="tool.name", read_only=True)
    tool_kind = serializers.CharField(source="tool.kind", read_only=True)
    tool_description = serializers.CharField(source="tool.description", read_only=True)

    class Meta:
        model = AgentTool
        fields = [
            "key",
            "tool",
            "tool_kind",
            "tool_description",
            "description_override",
            "requires_approval",
            "source",
            "position",
            "created_at",
        ]
        read_only_fields = fields


class SubAgentOutputSerializer(serializers.ModelSerializer):
    agent = serializers.CharField(source="child.slug", read_only=True)
    agent_name = serializers.CharField(source="child.name", read_only=True)
    tool_name = serializers.CharField(read_only=True, help_text="agent-<key>")
    agent_description = serializers.CharField(source="child.description", read_only=True)

    class Meta:
        model = SubAgent
        fields = [
            "key",
            "tool_name",
            "agent",
            "agent_name",
            "agent_description",
            "description_override",
            "source",
            "position",
            "created_at",
        ]
        read_only_fields = fields


class AgentOutputSerializer(serializers.ModelSerializer):
    owner = serializers.CharField(source="owner.username", read_only=True, allow_null=True)
    tools = ToolBindingOutputSerializer(source="tool_bindings", many=True, read_only=True)
    subagents = SubAgentOutputSerializer(source="subagent_bindings", many=True, read_only=True)

    class Meta:
        model = Agent
        fields = [
            "slug",
            "name",
            "description",
            "model",
            "instructions",
            "metadata",
            "default_options",
            "notification_policy",
            "editor_policy",
            "source",
            "owner",
            "version",
            "tools",
            "subagents",
            "created_at",
            "updated_at",
        ]
        read_only_fields = fields


# --- frames a thread's websocket takes (docs/protocol.md; agents_core/consumers.py) ---------
class ChatFrame(serializers.Serializer):
    text = serializers.CharField()
    options = serializers.DictField(required=False, default=dict)


class CallFrame(serializers.Serializer):
    toolCallId = serializers.CharField(max_length=100)  # noqa: N815 - the protocol's name


class ResumeFrame(CallFrame):
    payload = serializers.JSONField(required=False, allow_null=True, default=None)


class ClientToolResultFrame(CallFrame):
    output = serializers.JSONField(required=False, allow_null=True, default=None)
    error = serializers.CharField(required=False, allow_blank=True, default="")
