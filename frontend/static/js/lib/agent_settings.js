// The settings sections of the agent page beside the editor's instructions and tools:
// default options (max steps, tool choice, active tools, auto-resume, temperature, the
// model's settings), memory (how many messages the model sees, thread titles), export,
// duplicate, and delete. Saves go through the agent API with the editor's version and
// this tab's lock session (`call`), so they are checked and recorded as revisions like
// every other save. A code agent's settings come from code: shown, not editable.

import { mountBindings } from "./agent_bindings.js";
import { formOfOptions, optionsOfForm } from "./agent_options_form.js";
import { fill, h } from "./dom.js";

const TOOL_CHOICES = { auto: "auto (the model decides)", none: "none", required: "required (some tool)", tool: "one tool:" };

export function mountSettings({ root, actions = null, config, call, getState, afterSave }) {
  let agent = null; // the agent as GET /api/agents/<slug>/ returns it
  let form = null;
  let shown = { text: "", className: "" }; // the save's last status

  async function load() {
    const res = await call(config.urls.agent);
    if (!res.ok) return fill(root, h("p", { class: "error" }, res.data?.detail || "Settings could not be loaded."));
    const first = agent === null;
    agent = res.data;
    // A reload (the editor saved) keeps what the user is typing here.
    if (first) form = formOfOptions(agent.default_options || {});
    render();
    if (first && actions) mountActions({ root: actions, config, call, source: agent.source });
  }

  const editable = () => agent.source === "studio" && config.canEdit && getState()?.lockMine;
  const keys = () => [...agent.tools.map((t) => t.key), ...agent.subagents.map((s) => s.tool_name)];

  function field(label, input, note = "") {
    return h("label", {}, label, input, note ? h("span", { class: "muted small" }, note) : null);
  }

  function input(name, attrs = {}) {
    return h("input", {
      id: `option-${name}`, value: form[name], disabled: !editable(), ...attrs,
      oninput: (event) => { form[name] = event.target.value; },
    });
  }

  function checkbox(name, label) {
    return h("label", { class: "inline" }, h("input", {
      type: "checkbox", id: `option-${name}`, checked: form[name], disabled: !editable(),
      onchange: (event) => { form[name] = event.target.checked; },
    }), ` ${label}`);
  }

  function activeTools() {
    const all = keys();
    const limited = form.activeTools != null;
    return h("fieldset", { class: "active-tools" }, h("legend", {}, "Active tools"),
      h("label", { class: "inline" }, h("input", {
        type: "checkbox", id: "option-all-tools", checked: !limited, disabled: !editable(),
        onchange: (event) => { form.activeTools = event.target.checked ? null : [...all]; render(); },
      }), " All of the agent's tools"),
      limited ? all.map((key) => h("label", { class: "inline" }, h("input", {
        type: "checkbox", checked: form.activeTools.includes(key), disabled: !editable(), dataset: { key },
        onchange: (event) => {
          form.activeTools = event.target.checked ? [...form.activeTools, key] : form.activeTools.filter((k) => k !== key);
        },
      }), ` ${key}`)) : null);
  }

  function render() {
    const choice = h("select", {
      id: "option-toolChoice", disabled: !editable(),
      onchange: (event) => { form.toolChoice = event.target.value; render(); },
    }, Object.entries(TOOL_CHOICES).map(([value, label]) => h("option", { value }, label)));
    choice.value = form.toolChoice;
    const toolName = h("select", {
      id: "option-toolName", disabled: !editable(), hidden: form.toolChoice !== "tool",
      onchange: (event) => { form.toolName = event.target.value; },
    }, keys().map((key) => h("option", { value: key }, key)));
    toolName.value = form.toolName || keys()[0] || "";
    form.toolName = toolName.value;
    fill(root,
      h("div", { class: "field-head" }, h("h2", {}, "Default options"), h("span", { class: "grow" }),
        agent.source === "code" ? h("span", { class: "badge badge-locked" }, "Code-owned · read-only") : null),
      h("div", { class: "options-grid" },
        field("Max steps", input("maxSteps", { type: "number", min: 1, max: 100, placeholder: "5" })),
        field("Temperature", input("temperature", { type: "number", min: 0, max: 2, step: 0.1, placeholder: "model default" })),
        h("label", {}, "Tool choice", h("span", { class: "pair" }, choice, toolName))),
      activeTools(),
      checkbox("autoResume", "Auto-resume: the next chat message answers a pending question"),
      field("Model settings (JSON, passed to the model call)", h("textarea", {
        id: "option-modelSettings", rows: 2, value: form.modelSettings, disabled: !editable(), placeholder: '{"max_tokens": 800}',
        oninput: (event) => { form.modelSettings = event.target.value; },
      })),
      h("h2", {}, "Memory"),
      field("Messages the model sees", input("lastMessages", { type: "number", min: 1, max: 1000, placeholder: "200" }),
        "The latest messages of the thread, after the instructions."),
      checkbox("generateTitle", "Title each thread with a short summary of its first exchange"),
      h("div", { class: "savebar" }, h("span", { class: "grow" }),
        h("span", { id: "options-status", role: "status", class: shown.className }, shown.text),
        h("button", { type: "button", class: "primary", id: "options-save", disabled: !editable(), onclick: save }, "Save options")));
  }

  // The section re-renders when the editor saves (`reload`), possibly while this save is
  // in flight: the status lives in `shown`, which every render puts back.
  function showStatus(text, className) {
    shown = { text, className };
    const status = root.querySelector("#options-status");
    status.textContent = text;
    status.className = className;
  }

  async function save() {
    let options;
    try {
      options = optionsOfForm(form, agent.default_options || {});
    } catch (err) {
      showStatus(err.message, "error");
      return;
    }
    const res = await call(config.urls.agent, { method: "PATCH", body: { default_options: options, version: getState().version } });
    if (res.ok) {
      await afterSave(); // the editor takes the new version before the user sees "Saved"
      agent = res.data;
      form = formOfOptions(agent.default_options);
      render();
      showStatus(`Saved · version ${agent.version}`, "ok");
    } else {
      const problems = res.data?.default_options || [];
      showStatus([].concat(problems).join(" ") || res.data?.detail || `Not saved (HTTP ${res.status}).`, "error");
    }
  }

  load();
  return { reload: load, render: () => agent && render() };
}

// Export, duplicate and delete: the links and the confirmed delete of the page's head.
export function mountActions({ root, config, call, source }) {
  const del = source === "studio" && config.canEdit ? h("button", {
    type: "button", class: "secondary danger", id: "agent-delete",
    onclick: async () => {
      const typed = prompt(`Delete ${config.slug} with its threads and runs? This cannot be undone. Type the slug to confirm.`);
      if (typed !== config.slug) return;
      const res = await call(config.urls.agent, { method: "DELETE" });
      if (res.ok) window.location.assign(config.urls.home);
      else alert(res.data?.detail || `Not deleted (HTTP ${res.status}).`);
    },
  }, "Delete") : null;
  fill(root,
    h("a", { class: "button secondary", id: "export-json", href: `${config.urls.export}?format=json`, download: `${config.slug}.json` }, "Export JSON"),
    h("a", { class: "button secondary", id: "export-python", href: `${config.urls.export}?format=python` }, "Export Python"),
    h("a", { class: "button secondary", id: "agent-duplicate", href: config.urls.duplicate }, "Duplicate"),
    del);
}

// The sections of the page beside the editor: default options and memory, approvals and
// sub-agents, and the head's actions. `reload` after the editor saved (its tools may have
// changed).
export function mountSections({ roots, config, call, getState, afterSave }) {
  const settings = mountSettings({
    root: roots.settings, actions: roots.actions, config, call, getState, afterSave,
  });
  const canWrite = () => Boolean(config.canEdit && getState()?.lockMine);
  const bindings = mountBindings({ root: roots.bindings, config, call, canWrite, afterSave });
  let drawnWritable = null;
  return {
    // Drawn again only when this tab starts or stops holding the lock (not on every
    // renewal), so messages of the last save stay on screen.
    render: () => {
      if (canWrite() === drawnWritable) return;
      drawnWritable = canWrite();
      settings.render();
      bindings.render();
    },
    reload: () => { settings.reload(); bindings.reload(); },
  };
}
