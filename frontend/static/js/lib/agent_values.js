// The agent editor's form values, without any DOM: the values a server state stands for,
// which of them the user changed, and the PATCH body that saves just those changes.
//
// `state` is the editor state from GET /api/agents/<slug>/overrides/; `base` the values of
// that state (valuesOf); `values` what the form holds now; `pending` the tools being added
// ({key: {tool, description}}), not saved yet.

import { formatJson } from "./format.js";
import { merge3 } from "./merge.js";

// Instructions are text, or JSON (a list of messages, a system message) shown indented.
export const asText = (value) => (value == null ? "" : typeof value === "string" ? value : formatJson(value));

export function valuesOf(state) {
  const descriptions = {};
  const active = {};
  for (const tool of state.tools) {
    descriptions[tool.key] = tool.description;
    active[tool.key] = tool.active;
  }
  return {
    name: state.name, model: state.model, description: state.description,
    instructions: asText(state.instructions.effective),
    format: typeof state.instructions.effective === "string" ? "text" : "json",
    descriptions, active,
  };
}

// The server's tool rows and the ones being added (origin "new").
export function allTools(state, pending) {
  const adding = Object.entries(pending).map(([key, p]) => ({
    key, tool: p.tool, origin: "new", active: true, code_description: p.description,
    description: p.description, overridden: false,
  }));
  return [...state.tools, ...adding];
}

// The badge of a tool row: [text, class] ("" when the row needs none).
export function toolBadge(tool, source) {
  if (tool.origin === "new") return ["New · not saved yet", "badge-new"];
  if (!tool.active) return ["Removed", "badge-locked"];
  if (tool.origin === "added") return ["Added in the studio", "badge-new"];
  if (tool.overridden && source === "code") return ["Overridden", "badge-overridden"];
  return ["", ""];
}

// Why a tool cannot be added under `key` ("" when it can).
export function addToolProblem({ state, pending, name, key }) {
  if (!name) return "Choose a tool.";
  if (!/^[A-Za-z0-9_-]{1,64}$/.test(key)) return "A key uses letters, digits, _ and -.";
  const taken = allTools(state, pending).some((t) => t.key === key && t.active !== false) || key in pending;
  return taken ? `The agent already has a tool named ${key}.` : "";
}

// What the user changed: "instructions", "name", "desc:<key>", "add:<key>", "active:<key>".
export function dirtyFields({ state, base, values, pending }) {
  const dirty = [];
  if (values.instructions !== base.instructions) dirty.push("instructions");
  if (!state.source || state.source === "studio") {
    for (const name of ["name", "model", "description"]) if (values[name] !== base[name]) dirty.push(name);
  }
  for (const key of Object.keys(values.descriptions)) {
    if ((values.descriptions[key] || "").trim() !== (base.descriptions[key] || "").trim()) dirty.push(`desc:${key}`);
  }
  for (const key of Object.keys(values.active)) {
    if (key in pending) dirty.push(`add:${key}`);
    else if (values.active[key] !== base.active[key]) dirty.push(`active:${key}`);
  }
  return dirty;
}

// The PATCH body of a save (throws a SyntaxError when JSON instructions do not parse).
export function savePayload({ state, base, values, pending }) {
  const data = { version: state.version };
  const dirty = dirtyFields({ state, base, values, pending });
  if (dirty.includes("instructions")) {
    data.instructions = values.format === "json" ? JSON.parse(values.instructions) : values.instructions;
  }
  for (const name of ["name", "model", "description"]) if (dirty.includes(name)) data[name] = values[name];
  const tools = allTools(state, pending);
  const descriptions = {};
  for (const tool of tools) {
    if (!dirty.includes(`desc:${tool.key}`)) continue;
    const text = (values.descriptions[tool.key] || "").trim();
    descriptions[tool.key] = !text || text === tool.code_description.trim() ? null : text;
  }
  if (Object.keys(descriptions).length) data.tool_descriptions = descriptions;
  if (dirty.some((d) => d.startsWith("active:") || d.startsWith("add:"))) {
    const kept = tools.filter((t) => values.active[t.key]);
    if (state.source === "code") {
      // Code agents store a delta from code: what is switched off, and what is added.
      data.tools_removed = state.tools.filter((t) => t.origin !== "added" && !values.active[t.key]).map((t) => t.key);
      data.tools_added = Object.fromEntries(kept.filter((t) => t.origin === "added" || t.origin === "new").map((t) => [t.key, t.tool]));
    } else {
      data.tools = Object.fromEntries(kept.map((t) => [t.key, t.tool]));
    }
  }
  return data;
}

// The instructions once the user's edit (base -> mine) is replayed onto the current text of
// a newer version: {text, clean}. When both changed the same lines the user's lines win and
// `clean` is false.
export function reapplyEdit(baseText, mineText, currentText) {
  if (mineText === baseText) return { text: currentText, clean: true };
  const merged = merge3(baseText, mineText, currentText);
  return merged === null ? { text: mineText, clean: false } : { text: merged, clean: true };
}
