"""Writes of an agent's bindings, of either kind: a tool (`AgentTool`, the model sees it
under its key) or a sub-agent (`SubAgent`, the model sees it as the tool `agent-<key>`).

One path for both: a `BindingKind` says what differs (the model, the field that names the
target, how a target is found and checked, which extra fields there are); create, update
and delete are the same steps. Code bindings are read-only here. Studio bindings on a code
agent are editor overrides: the agent's `editor` policy and the change permission decide
(agents_core.editor.services.permissions.binding_write_check), and each change commits
through the editor (agents_core.editor.services.revisions.tracked_change) as a revision.
Every write names the edit lock session it comes from (`lock_id`) and is refused (423)
while another session holds the agent's live lock.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any, Literal, TypeVar

from django.db import transaction
from django.db.models import Max, Model, QuerySet

from agents_core.editor.services.locks import lock_guard
from agents_core.editor.services.permissions import binding_write_check
from agents_core.editor.services.revisions import tracked_change
from agents_core.models import Agent, AgentTool, Source, SubAgent
from agents_core.services.agents import defined_in_code, save_or_field_error
from agents_core.services.binding_rules import (
    bindable_tool,
    check_key_free,
    check_no_cycle,
    check_subagent_key_free,
    subagent_child,
)

Binding = AgentTool | SubAgent
KindName = Literal["tool", "subagent"]
T = TypeVar("T")

# Binding fields -> the editor policy field a change of them needs on a code agent.
BINDING_POLICY_FIELDS = {
    "tool": "tools",
    "agent": "tools",
    "key": "tools",
    "requires_approval": "tools",
    "position": "tools",
    "description_override": "tool_descriptions",
}


@dataclass(frozen=True)
class BindingKind:
    name: KindName
    model: type[Model]
    owner_field: str  # the binding's agent: "agent" or "parent"
    target_field: str  # what the API names: "tool" (a tool name) or "agent" (a slug)
    target_attr: str  # the model's foreign key to the target: "tool" or "child"
    noun: str
    extra_fields: tuple[str, ...]
    find: Callable[..., Any]  # (parent=, user=, name=) -> the target row, or a field error
    key_check: Callable[..., None]  # (agent, key, exclude_pk=) -> field error if taken

    def bindings(self, agent: Agent) -> QuerySet[Any]:
        """The agent's bindings of this kind, with what `binding_get` callers read."""
        return self.model.objects.filter(**{self.owner_field: agent}).select_related(  # type: ignore[attr-defined]
            self.owner_field, self.target_attr
        )

    def target_name(self, binding: Binding) -> str:
        target = getattr(binding, self.target_attr)
        return target.name if self.name == "tool" else target.slug

    def taken(self, key: str) -> str:
        return f"The agent already has a {self.noun} with the key {key!r}."


def _find_tool(*, parent: Agent, user: Any, name: str) -> Any:
    return bindable_tool(agent=parent, user=user, name=name)


def _find_subagent(*, parent: Agent, user: Any, name: str) -> Agent:
    child = subagent_child(parent=parent, user=user, slug=name)
    check_no_cycle(parent, child)
    return child


TOOL = BindingKind(
    name="tool",
    model=AgentTool,
    owner_field="agent",
    target_field="tool",
    target_attr="tool",
    noun="tool",
    extra_fields=("requires_approval",),
    find=_find_tool,
    key_check=check_key_free,
)
SUBAGENT = BindingKind(
    name="subagent",
    model=SubAgent,
    owner_field="parent",
    target_field="agent",
    target_attr="child",
    noun="sub-agent",
    extra_fields=(),
    find=_find_subagent,
    key_check=check_subagent_key_free,
)
KINDS: dict[str, BindingKind] = {TOOL.name: TOOL, SUBAGENT.name: SUBAGENT}


def kind_of(binding: Binding) -> BindingKind:
    return TOOL if isinstance(binding, AgentTool) else SUBAGENT


def binding_ensure_editable(binding: Binding) -> None:
    if binding.source == Source.CODE:
        raise defined_in_code(f"Binding {binding.key!r}")


@transaction.atomic
def binding_create(
    *,
    kind: BindingKind,
    agent: Agent,
    user: Any,
    target: str,
    key: str | None = None,
    description_override: str = "",
    position: int | None = None,
    lock_id: int | None,
    **extra: Any,
) -> Binding:
    """Bind a tool (by name) or an agent (by slug) to `agent`; the binding is studio-owned,
    also on a code agent."""
    unknown = set(extra) - set(kind.extra_fields)
    if unknown:
        raise TypeError(f"a {kind.noun} binding has no fields {sorted(unknown)}")
    fields = [kind.target_field] + (["description_override"] if description_override else [])

    def write() -> Binding:
        row = kind.find(parent=agent, user=user, name=target)
        binding_key = key or _default_key(kind, row)
        kind.key_check(agent, binding_key)
        binding = kind.model(
            **{kind.owner_field: agent, kind.target_attr: row},
            key=binding_key,
            description_override=description_override,
            source=Source.STUDIO,
            position=_next_position(kind.bindings(agent)) if position is None else position,
            **extra,
        )
        save_or_field_error(binding, "key", kind.taken(binding_key))
        return binding  # type: ignore[return-value]

    return _binding_write(agent=agent, user=user, fields=fields, lock_id=lock_id, write=write)


@transaction.atomic
def binding_update(
    *, binding: Binding, user: Any, data: dict[str, Any], lock_id: int | None
) -> Binding:
    """Change the given fields (a PUT sends all of them, a PATCH some)."""
    binding_ensure_editable(binding)
    kind = kind_of(binding)
    agent = getattr(binding, kind.owner_field)

    def write() -> Binding:
        if kind.target_field in data:  # checked again even if unchanged: still bindable?
            target = data[kind.target_field]
            setattr(binding, kind.target_attr, kind.find(parent=agent, user=user, name=target))
        if "key" in data and data["key"] != binding.key:
            kind.key_check(agent, data["key"], exclude_pk=binding.pk)
            binding.key = data["key"]
        for field in ("description_override", "position", *kind.extra_fields):
            if field in data:
                setattr(binding, field, data[field])
        save_or_field_error(binding, "key", kind.taken(binding.key))
        return binding

    return _binding_write(
        agent=agent,
        user=user,
        lock_id=lock_id,
        fields=_changed_fields(kind, binding, data),
        write=write,
    )


@transaction.atomic
def binding_delete(*, binding: Binding, user: Any, lock_id: int | None) -> None:
    binding_ensure_editable(binding)
    kind = kind_of(binding)
    _binding_write(
        agent=getattr(binding, kind.owner_field),
        user=user,
        fields=[kind.target_field],
        write=binding.delete,
        lock_id=lock_id,
    )


def _default_key(kind: BindingKind, row: Any) -> str:
    return row.name if kind.name == "tool" else row.slug


def _next_position(bindings: QuerySet[Any]) -> int:
    top = bindings.aggregate(top=Max("position"))["top"]
    return 0 if top is None else top + 1


def _changed_fields(kind: BindingKind, binding: Binding, data: dict[str, Any]) -> list[str]:
    current = {
        kind.target_field: kind.target_name(binding),
        "key": binding.key,
        "position": binding.position,
        "description_override": binding.description_override,
        **{field: getattr(binding, field) for field in kind.extra_fields},
    }
    return [field for field, value in data.items() if current.get(field) != value]


def _binding_write(
    *,
    agent: Agent,
    user: Any,
    fields: Iterable[str],
    write: Callable[[], T],
    lock_id: int | None,
) -> T:
    """Run a binding write; refused (423) while another session holds the agent's edit lock.

    On a code agent it is an editor override: the policy and the change permission decide,
    and the write is recorded as a revision of the agent."""
    if agent.source != Source.CODE:
        lock_guard(agent=agent, user=user, lock_id=lock_id)
        return write()
    binding_write_check(user=user, agent=agent, fields={BINDING_POLICY_FIELDS[f] for f in fields})
    done: list[T] = []
    tracked_change(agent=agent, user=user, lock_id=lock_id, apply=lambda: done.append(write()))
    return done[0]
