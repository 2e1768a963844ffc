// The agent's notification policy in the chat's Inbox panel: what happens to a
// notification of each priority while a run is going (active) or not (idle), and rules
// per source that come first. Read-only for code agents; studio agents edit it here.

import { h } from "./dom.js";

export const PRIORITIES = ["low", "medium", "high", "urgent"];
const ACTIONS = ["now", "summary", "digest", "persist"];

// Draws the policy `data` (GET .../notification-policy) into `details`, keeping its
// <summary>; onSave(policy) -> promise stores an edited policy and draws it again.
export function renderPolicy(details, data, { onSave }) {
  const editable = data.editable;
  const choices = (state, inherit) => [
    ...(inherit ? [h("option", { value: "" }, "inherit")] : []),
    ...ACTIONS.filter((a) => a !== "summary" || state === "active").map((a) => h("option", { value: a }, a)),
  ];
  const select = (name, label, state, value, inherit) => {
    return h("select", { name, "aria-label": label, value: value || "" }, choices(state, inherit));
  };
  const cell = (priority, state) => {
    const value = data.table[priority][state];
    if (!editable) return h("td", { class: `act act-${value}` }, value);
    return h("td", {}, select(`${priority}.${state}`, `${priority} when ${state}`, state, value, false));
  };
  const table = h("table", { class: "policy-table" },
    h("thead", {}, h("tr", {}, h("th", {}, "priority"), h("th", {}, "active"), h("th", {}, "idle"))),
    h("tbody", {}, PRIORITIES.map((p) => h("tr", {}, h("th", {}, h("span", { class: `pri pri-${p}` }, p)), cell(p, "active"), cell(p, "idle")))));
  // Rules for one source override the priority table where they say something.
  const sourceTable = (source, rules) => {
    const rule = (priority, state) => rules?.[priority]?.[state] || "";
    const body = PRIORITIES.map((p) => h("tr", {}, h("th", {}, h("span", { class: `pri pri-${p}` }, p)),
      ...["active", "idle"].map((state) => editable
        ? h("td", {}, select(`${p}.${state}`, `${source}: ${p} when ${state}`, state, rule(p, state), true))
        : h("td", { class: `act act-${rule(p, state) || "inherit"}` }, rule(p, state) || "inherit"))));
    const remove = editable ? h("button", { type: "button", class: "link policy-source-remove", "aria-label": `Remove the rules for ${source}`,
      onclick: (event) => event.target.closest(".policy-source").remove() }, "remove") : null;
    return h("div", { class: "policy-source", dataset: { source } },
      h("div", { class: "policy-source-head" }, "From ", h("code", {}, source), remove),
      h("table", { class: "policy-table" },
        h("thead", {}, h("tr", {}, h("th", {}, "priority"), h("th", {}, "active"), h("th", {}, "idle"))),
        h("tbody", {}, body)));
  };
  const sources = h("div", { class: "policy-sources" },
    Object.entries(data.policy?.source || {}).map(([source, rules]) => sourceTable(source, rules)));
  const note = data.codeFunction
    ? "This agent decides in code (a policy function); the table is its fallback."
    : editable ? "What happens to a notification while a run is going (active) or not (idle)." : "Defined in code: read-only here.";
  const children = [details.firstChild, h("p", { class: "muted" }, note), table];
  if (editable || sources.children.length) {
    children.push(h("p", { class: "muted" }, "By source: a source's rules come first; \"inherit\" goes by priority."), sources);
  }
  if (editable) {
    const status = h("span", { class: "policy-status muted", role: "status" });
    const newSource = h("input", { name: "policy-source", placeholder: "source, e.g. github", "aria-label": "Source to add rules for" });
    const add = h("button", { type: "button", class: "secondary policy-source-add", onclick: () => {
      const source = newSource.value.trim();
      if (!source) return;
      if (!sources.querySelector(`.policy-source[data-source="${CSS.escape(source)}"]`)) sources.append(sourceTable(source, {}));
      newSource.value = "";
    } }, "Add source");
    children.push(h("div", { class: "policy-source-new" }, newSource, add));
    const save = h("button", { type: "button", class: "primary", onclick: async () => {
      const priority = {};
      for (const p of PRIORITIES) {
        priority[p] = { active: table.querySelector(`[name="${p}.active"]`).value, idle: table.querySelector(`[name="${p}.idle"]`).value };
      }
      const source = {};
      for (const box of sources.querySelectorAll(".policy-source")) {
        const rules = {};
        for (const p of PRIORITIES) {
          for (const state of ["active", "idle"]) {
            const value = box.querySelector(`[name="${p}.${state}"]`).value;
            if (value) (rules[p] ||= {})[state] = value;
          }
        }
        if (Object.keys(rules).length) source[box.dataset.source] = rules;
      }
      try {
        await onSave({ priority, source });
        details.querySelector(".policy-status").textContent = "Saved.";
      } catch (error) {
        status.textContent = error.message;
        status.className = "policy-status error";
      }
    } }, "Save policy");
    children.push(h("div", { class: "policy-actions" }, save, status));
  }
  details.replaceChildren(...children);
}
