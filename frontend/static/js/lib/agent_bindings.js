// The agent page's binding details beside the editor's tool rows: per tool binding, whether
// a call needs the user's approval (and whether the tool runs sync or async, a property of
// the tool); and the sub-agents: add (agent, key, description), change the description,
// remove. Writes go through the bindings API with this tab's lock session (`call`); the
// server refuses cycles, taken keys and what the agent's editor policy keeps in code.

import { fill, h } from "./dom.js";
import { listOf } from "./api.js";

export function mountBindings({ root, config, call, canWrite, afterSave }) {
  let agent = null;
  let candidates = null; // agents that may be added as sub-agents
  let modes = {}; // tool name -> "sync" | "async" (a property of the tool)
  // What the user typed into the add form: kept when the section is drawn again.
  let draft = { agent: "", key: "", description: "", error: "" };

  async function load() {
    const res = await call(config.urls.agent);
    if (!res.ok) return fill(root, h("p", { class: "error" }, res.data?.detail || "Bindings could not be loaded."));
    if (!candidates) {
      const list = await call(`${config.urls.agents}?limit=1000`);
      candidates = list.ok ? listOf(list.data).filter((a) => a.slug !== res.data.slug) : [];
    }
    const tools = await call(`${config.urls.tools}?limit=1000`);
    if (tools.ok) modes = Object.fromEntries(listOf(tools.data).map((t) => [t.name, t.execution_mode]));
    agent = res.data; // render() may run from now on (the lock changes), with candidates
    render();
  }

  const writable = (binding) => canWrite() && binding.source === "studio";
  const problem = (res) => {
    const fields = Object.entries(res.data || {}).filter(([k]) => !["code", "errors"].includes(k));
    return fields.map(([, v]) => [].concat(v).join(" ")).join(" ") || `Refused (HTTP ${res.status}).`;
  };

  async function write(url, method, body, status) {
    const res = await call(url, { method, body });
    if (!res.ok) {
      status.textContent = problem(res);
      status.className = "binding-status error";
      return false;
    }
    draft.error = "";
    await afterSave();
    await load();
    return true;
  }

  function toolRow(binding) {
    const status = h("span", { class: "binding-status" });
    return h("li", { class: "binding-row", dataset: { key: binding.key } },
      h("strong", {}, binding.key), h("code", { class: "muted" }, binding.tool),
      h("span", { class: "badge" }, modes[binding.tool] === "async" ? "async · a worker runs it" : "sync"),
      h("label", { class: "inline" }, h("input", {
        type: "checkbox", checked: binding.requires_approval, disabled: !writable(binding),
        "aria-label": `${binding.key} requires approval`, class: "approval-toggle",
        onchange: (event) => write(`${config.urls.agentTools}${encodeURIComponent(binding.key)}/`, "PATCH",
          { requires_approval: event.target.checked }, status),
      }), " requires approval"),
      status);
  }

  function subagentRow(binding) {
    const status = h("span", { class: "binding-status" });
    const description = h("input", {
      value: binding.description_override, disabled: !writable(binding), placeholder: binding.agent_description || "the agent's description",
      "aria-label": `Description of agent-${binding.key}`,
    });
    const url = `${config.urls.agentSubagents}${encodeURIComponent(binding.key)}/`;
    return h("li", { class: "binding-row", dataset: { key: binding.key } },
      h("strong", {}, binding.tool_name), h("span", { class: "muted" }, `→ ${binding.agent_name} (${binding.agent})`),
      description,
      writable(binding) ? [
        h("button", { type: "button", class: "secondary", onclick: () => write(url, "PATCH", { description_override: description.value }, status) }, "Save"),
        h("button", { type: "button", class: "link-button", onclick: () => write(url, "DELETE", undefined, status) }, "Remove"),
      ] : h("span", { class: "badge badge-locked" }, binding.source === "code" ? "from code" : "read-only"),
      status);
  }

  function addForm() {
    const status = h("span", { class: "binding-status error", id: "subagent-error" }, draft.error);
    const keep = (name) => (event) => { draft[name] = event.target.value; };
    const pick = h("select", { id: "subagent-pick", "aria-label": "Agent to add as a sub-agent", onchange: keep("agent") },
      h("option", { value: "" }, "Choose an agent…"),
      candidates.map((a) => h("option", { value: a.slug }, `${a.name} (${a.slug})`)));
    pick.value = draft.agent;
    const key = h("input", { id: "subagent-key", placeholder: "key (default: its slug)", "aria-label": "Sub-agent key", value: draft.key, oninput: keep("key") });
    const description = h("input", {
      id: "subagent-description", placeholder: "description the model sees (optional)", "aria-label": "Sub-agent description",
      value: draft.description, oninput: keep("description"),
    });
    const add = async () => {
      if (!draft.agent) return void (status.textContent = "Choose an agent.");
      const body = { agent: draft.agent, description_override: draft.description };
      if (draft.key.trim()) body.key = draft.key.trim();
      const sent = draft;
      draft = { agent: "", key: "", description: "", error: "" }; // the form starts afresh once added
      if (await write(config.urls.agentSubagents, "POST", body, status)) return;
      draft = { ...sent, error: status.textContent };
      if (!status.isConnected) render(); // drawn again meanwhile: show the refusal there
    };
    return h("div", { class: "add-subagent" }, pick, key, description,
      h("button", { type: "button", class: "secondary", id: "subagent-add", onclick: add }, "Add sub-agent"), status);
  }

  function render() {
    const membership = canWrite() && (agent.source === "studio" || config.toolsOpen);
    fill(root,
      h("h2", {}, "Approvals"),
      h("p", { class: "muted" }, "A call of a tool that requires approval waits until you approve it in the chat."),
      h("ul", { class: "binding-rows", id: "approval-rows" }, agent.tools.length ? agent.tools.map(toolRow) : h("li", { class: "muted" }, "No tools.")),
      h("h2", {}, "Sub-agents"),
      h("p", { class: "muted" }, "The model calls a sub-agent as the tool agent-<key>."),
      h("ul", { class: "binding-rows", id: "subagent-rows" }, agent.subagents.length ? agent.subagents.map(subagentRow) : h("li", { class: "muted" }, "No sub-agents.")),
      membership ? addForm() : null);
  }

  load();
  return { reload: load, render: () => agent && render() };
}
