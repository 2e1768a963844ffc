// Pure helpers of the new-agent page (agent_new.js): slugs from names, export documents
// with a new slug and name, and the renames an import needs after a name clash.

// "Trip planner 2!" -> "trip-planner-2": the agent slug rules (a-z, 0-9, - and _).
export function slugify(text) {
  return String(text || "")
    .normalize("NFKD")
    .replace(/[\u0300-\u036f]/g, "")
    .toLowerCase()
    .replace(/[^a-z0-9_-]+/g, "-")
    .replace(/^[-_]+|-+$/g, "")
    .slice(0, 100);
}

// A copy of an export document whose first agent gets `slug` and `name`; every reference
// to the old slug (sub-agent bindings, the document's `agent`) follows.
export function withIdentity(document, { slug, name }) {
  const copy = structuredClone(document);
  const old = copy.agents[0].slug;
  copy.agents[0].slug = slug;
  if (name) copy.agents[0].name = name;
  copy.agent = slug;
  for (const agent of copy.agents) {
    for (const binding of agent.subagents || []) if (binding.agent === old) binding.agent = slug;
  }
  return copy;
}

// The `renames` body of an import from the clashes of a refused one ({kind, name,
// suggestion}) and the names the user typed ({"agent:trip": "trip-3"}); untouched rows
// take the suggestion.
export function renamesFor(clashes, typed = {}) {
  const renames = { agents: {}, tools: {} };
  for (const clash of clashes || []) {
    const chosen = (typed[`${clash.kind}:${clash.name}`] || "").trim() || clash.suggestion;
    renames[clash.kind === "agent" ? "agents" : "tools"][clash.name] = chosen;
  }
  return renames;
}

// "2 agents (trip, trip-helper), 1 tool (shout)" from an import preview.
export function planSummary(plan) {
  const part = (items, one, many) =>
    items.length ? `${items.length} ${items.length === 1 ? one : many} (${items.join(", ")})` : "";
  return [part(plan.agents.map((a) => a.slug), "agent", "agents"), part(plan.tools, "tool", "tools")]
    .filter(Boolean)
    .join(", ");
}
