// The agent editor page: instructions and tool descriptions under the agent's editor
// policy, with the edit lock (a session of this tab, lib/edit_lock.js), versioned saves (a
// 409 shows the current text and lets the user re-apply their change on top), reset to
// code, and revisions with diffs. The server decides what is editable and refuses stale
// saves and writes from any session but the lock's; this page only shows it.

import { renderLockBar } from "./lib/agent_lockbar.js";
import { InstructionsEditor } from "./lib/agent_instructions.js";
import { RevisionList, renderDiff } from "./lib/agent_revisions.js";
import { mountSections } from "./lib/agent_settings.js";
import {
  addToolProblem, allTools as toolsOf, asText, dirtyFields as changedFields, reapplyEdit, savePayload, toolBadge, valuesOf,
} from "./lib/agent_values.js";
import { ApiError, api, listOf } from "./lib/api.js";
import { fill, h } from "./lib/dom.js";
import { EditLockSession } from "./lib/edit_lock.js";
import { fullTime, timeAgo } from "./lib/format.js";
import { lineDiff } from "./lib/line_diff.js";
import { mountModelPicker } from "./model_picker.js";

const config = JSON.parse(document.getElementById("editor-config").textContent);
const $ = (id) => document.getElementById(id);

const FIELD_LABELS = { tools: "tool membership", tool_descriptions: "tool descriptions" };
let pending = {}; // tools the user is adding: {key: {tool, description}}
let toolCatalog = null; // tools that may be added, from /api/tools/
let state = null; // the last editor state from the server (GET .../overrides/)
let base = null; // the form values that state corresponds to (to tell what the user changed)
let poll = null;
const lock = new EditLockSession({
  url: config.urls.lock, username: config.username, heartbeatMs: config.heartbeatMs, onChange: lockChanged,
});
let heldBefore = false; // whether this tab held the lock at the last change
const instructions = new InstructionsEditor({ root: $("instructions-structured"), textarea: $("field-instructions"), previewUrl: config.urls.preview, call });
const settings = mountSections({
  roots: { settings: $("settings-block"), bindings: $("bindings-block"), actions: $("agent-actions") }, config, call, getState: () => state && { version: state.version, lockMine: lock.mine },
  afterSave: async () => { const res = await call(config.urls.overrides); if (res.ok) adopt(res.data, { keep: formValues() }); loadRevisions(); },
});

// --- HTTP ---------------------------------------------------------------------------------
// Every answer as {ok, status, data}: refusals (409, 423, ...) carry the data this page shows.
// Writes name this tab's lock session; a 423 means another session holds the lock now.
async function call(url, { method = "GET", body } = {}) {
  try {
    const headers = method === "GET" ? {} : lock.headers();
    return { ok: true, status: 200, data: await api(url, { method, body, headers }) };
  } catch (err) {
    if (!(err instanceof ApiError)) throw err;
    const res = { ok: false, status: err.status, data: err.body || { detail: err.message } };
    if (res.status === 423 && method !== "GET") lock.lose(res.data.lock);
    return res;
  }
}

// --- values -------------------------------------------------------------------------------
const ago = (iso) => (iso ? timeAgo(iso) : "");
const editable = (field) => state.ownership[field] === "editor";
const allTools = () => toolsOf(state, pending);
const dirtyFields = (values) => changedFields({ state, base, values, pending });

function formValues() {
  const values = structuredClone(base);
  values.instructions = $("field-instructions").value;
  values.format = instructions.format();
  for (const name of ["name", "model", "description"]) values[name] = $(`field-${name}`).value;
  for (const row of document.querySelectorAll(".tool-row")) {
    const key = row.dataset.key;
    values.descriptions[key] = row.querySelector("textarea").value;
    const toggle = row.querySelector("input[type=checkbox]");
    if (toggle) values.active[key] = toggle.checked;
  }
  return values;
}

// --- rendering ----------------------------------------------------------------------------
function canWrite() {
  return config.canEdit && lock.mine;
}

function adopt(next, { keep = null } = {}) {
  // Take the server's state; `keep` (the user's form values) are re-applied on top.
  const previous = base;
  state = next;
  base = valuesOf(next);
  render();
  if (keep && previous) {
    if (keep.instructions !== previous.instructions) $("field-instructions").value = keep.instructions;
    instructions.load(keep.format || base.format, canWrite() && editable("instructions"));
    for (const name of ["name", "model", "description"]) {
      if (keep[name] !== previous[name]) $(`field-${name}`).value = keep[name];
    }
    for (const row of document.querySelectorAll(".tool-row")) {
      const key = row.dataset.key;
      if (key in keep.descriptions && keep.descriptions[key] !== previous.descriptions[key]) {
        row.querySelector("textarea").value = keep.descriptions[key];
      }
      const toggle = row.querySelector("input[type=checkbox]");
      if (toggle && key in keep.active && keep.active[key] !== previous.active[key]) toggle.checked = keep.active[key];
    }
  }
  updateSaveButton();
}

function render() {
  const code = state.source === "code";
  $("editor-title").textContent = state.name;
  $("editor-model").textContent = state.model;
  const label = (f) => FIELD_LABELS[f] || f;
  const fields = (owner) => Object.entries(state.ownership).filter(([, o]) => o === owner).map(([f]) => label(f));
  $("editor-policy").textContent = code
    ? `Defined in code. Editable here: ${fields("editor").join(", ") || "nothing"}. Code owns ${fields("code").join(", ")}.`
    : "Created in the studio: you can edit every field but its id.";

  $("studio-fields").hidden = code;
  for (const name of ["name", "model", "description"]) {
    $(`field-${name}`).value = state[name] || "";
    $(`field-${name}`).disabled = !canWrite() || !editable(name);
  }

  const instr = state.instructions;
  const area = $("field-instructions");
  area.value = base.instructions;
  area.disabled = !canWrite() || !editable("instructions");
  instructions.load(base.format, !area.disabled);
  const badge = $("instructions-badge");
  if (!editable("instructions")) setBadge(badge, "Code-owned · read-only", "badge-locked");
  else if (instr.overridden) setBadge(badge, "Overridden", "badge-overridden");
  else setBadge(badge, code ? "From code" : "", "badge-code");
  $("instructions-code-pane").hidden = !(code && instr.overridden);
  $("instructions-pair").classList.toggle("paired", code && instr.overridden);
  $("instructions-code").textContent = asText(instr.code);
  $("instructions-reset").hidden = !(code && instr.overridden && editable("instructions"));
  $("instructions-reset").disabled = !canWrite();
  $("instructions-error").textContent = "";

  renderTools();
  const last = state.last_change;
  $("version-text").textContent = `Version ${state.version}` +
    (last ? ` · last changed by ${last.by || "someone"}, ${ago(last.at)}` : " · never edited");
  $("version-text").title = last ? fullTime(last.at) : "";
}

function setBadge(el, text, cls) {
  el.textContent = text;
  el.className = `badge ${cls}`;
  el.hidden = !text;
  return el;
}

function renderTools() {
  const membership = editable("tools");
  $("add-tool").hidden = !membership || !canWrite();
  if (membership && canWrite()) loadCatalog();
  $("tools-note").textContent = editable("tool_descriptions")
    ? "Descriptions the model sees. Empty = the tool's own description."
    : "Code owns the tool descriptions of this agent.";
  const tools = allTools();
  fill($("tool-rows"), tools.length ? tools.map(toolRow) : h("li", { class: "muted" }, "No tools."));
}

function toolRow(tool) {
  const paired = tool.overridden && state.source === "code";
  const toggle = editable("tools") ? h("input", {
    type: "checkbox", checked: tool.active, title: "The agent has this tool", "aria-label": `The agent has ${tool.key}`,
    disabled: !canWrite(),
    onchange: () => {
      if (tool.origin !== "new") return updateSaveButton();
      delete pending[tool.key]; // un-adding a tool that was never saved
      adopt(state, { keep: formValues() });
    },
  }) : null;
  const reset = paired && editable("tool_descriptions") ? h("button", {
    type: "button", class: "link-button", disabled: !canWrite(), onclick: () => resetField("tool_descriptions", tool.key),
  }, tool.origin === "added" ? "Reset description" : "Reset to code") : null;
  return h("li", { class: "tool-row", dataset: { key: tool.key } },
    h("div", { class: "field-head" }, toggle, h("strong", {}, tool.key), h("code", { class: "muted" }, tool.tool),
      setBadge(h("span"), ...toolBadge(tool, state.source)), h("span", { class: "grow" }), reset),
    h("div", { class: `side-by-side${paired ? " paired" : ""}` },
      h("textarea", {
        rows: 2, value: tool.description, disabled: !canWrite() || !editable("tool_descriptions"),
        "aria-label": `Description of ${tool.key}`, oninput: updateSaveButton,
      }),
      paired ? h("div", { class: "code-pane" }, h("span", { class: "pane-title" }, "Code value"), h("pre", {}, tool.code_description)) : null));
}

function updateSaveButton() {
  if (!state) return;
  const dirty = dirtyFields(formValues());
  $("save").disabled = !canWrite() || dirty.length === 0;
  if (dirty.length && canWrite()) setStatus(`${dirty.length} unsaved change${dirty.length > 1 ? "s" : ""}`, "");
}

function setStatus(text, cls) {
  const el = $("save-status");
  el.textContent = text;
  el.className = cls;
}

// --- saving -------------------------------------------------------------------------------
async function save(event) {
  event.preventDefault();
  const values = formValues();
  let data;
  try {
    data = savePayload({ state, base, values, pending });
  } catch (err) {
    $("instructions-error").textContent = `Not valid JSON: ${err.message}`;
    return;
  }
  $("save").disabled = true;
  setStatus("Saving…", "");
  const res = await call(config.urls.overrides, { method: "PATCH", body: data });
  if (res.ok) {
    $("conflict").hidden = true;
    $("stale-note").hidden = true;
    pending = {};
    adopt(res.data);
    settings.reload();
    const stripped = res.data.stripped.length ? ` (code owns ${res.data.stripped.join(", ")}: not saved)` : "";
    setStatus(`Saved · version ${res.data.version}${stripped}`, "ok");
    loadRevisions();
  } else if (res.status === 409 && res.data.current) {
    showConflict(res.data, values);
  } else {
    const fields = Object.entries(res.data || {}).filter(([k]) => !["detail", "code"].includes(k));
    if (fields.length) $("instructions-error").textContent = fields.map(([k, v]) => `${k}: ${[].concat(v).join(" ")}`).join(" ");
    setStatus(res.data?.detail || `Not saved (HTTP ${res.status}).`, "error");
    updateSaveButton();
  }
}

function showConflict(body, mine) {
  const current = body.current;
  const last = current.last_change || {};
  const panel = $("conflict");
  panel.hidden = false;
  $("stale-note").hidden = true;
  $("conflict-detail").textContent =
    `${last.by || "Someone"} saved version ${current.version}${last.at ? ` ${ago(last.at)}` : ""}, ` +
    `after you opened this page (you started from version ${body.your_version}). Nothing was overwritten.`;
  $("conflict-version").textContent = current.version;
  const currentText = asText(current.instructions.effective);
  const { text: result, clean } = reapplyEdit(base.instructions, mine.instructions, currentText);
  $("conflict-current").textContent = currentText;
  $("conflict-mine").textContent = mine.instructions;
  $("conflict-note").textContent = clean
    ? "Your change and theirs touch different lines: re-applying keeps both."
    : "Your change and theirs touch the same lines: re-applying puts your lines in place of theirs.";
  renderDiff($("conflict-diff"), [{ field: "instructions", lines: lineDiff(currentText, result) }]);
  $("conflict-reapply").onclick = () => {
    panel.hidden = true;
    adopt(current, { keep: { ...mine, instructions: result } });
    setStatus(`Your change is re-applied on top of version ${current.version}: review it and save.`, "");
  };
  $("conflict-discard").onclick = () => {
    panel.hidden = true;
    pending = {};
    adopt(current);
    setStatus(`Showing version ${current.version}.`, "");
  };
  setStatus("Not saved: the agent changed meanwhile.", "error");
  loadRevisions();
  panel.scrollIntoView({ block: "start" });
}

async function resetField(field, key) {
  const what = field === "instructions" ? "the instructions" : `the description of ${key}`;
  if (!confirm(`Reset ${what} to the code value? The override is dropped (the revisions keep it).`)) return;
  const keep = formValues();
  const res = await call(config.urls.reset, { method: "POST", body: { field, key, version: state.version } });
  if (res.ok) {
    if (field === "instructions") keep.instructions = base.instructions; // the reset wins here
    if (key) keep.descriptions[key] = base.descriptions[key];
    adopt(res.data, { keep });
    setStatus(`Reset to code · version ${res.data.version}`, "ok");
    loadRevisions();
  } else if (res.status === 409 && res.data.current) {
    showConflict(res.data, keep);
  } else {
    setStatus(res.data?.detail || `Reset refused (HTTP ${res.status}).`, "error");
  }
}

// --- revisions ----------------------------------------------------------------------------
const revisions = new RevisionList({
  call, url: config.urls.revisions, canView: config.canViewRevisions, onShow: wireRestore,
});
const loadRevisions = () => revisions.load();

function wireRestore(rev) {
  const restore = $("revision-restore");
  restore.disabled = !canWrite() || rev.version === state.version;
  restore.onclick = async () => {
    if (!confirm(`Restore version ${rev.version}? It becomes a new version; nothing is lost.`)) return;
    const out = await call(`${config.urls.revisions}${rev.id}/restore`, { method: "POST", body: { version: state.version } });
    if (out.ok) {
      adopt(out.data);
      setStatus(`Restored version ${rev.version} as version ${out.data.version}.`, "ok");
      loadRevisions();
    } else if (out.status === 409 && out.data.current) {
      showConflict(out.data, formValues());
    } else {
      setStatus(out.data?.detail || `Restore refused (HTTP ${out.status}).`, "error");
    }
  };
}

// --- the edit lock ------------------------------------------------------------------------
const renderLock = (message = "") => renderLockBar(lock, config, message);

// The lock changed (taken, renewed, lost to another session): the form is rendered again,
// the user's values kept, only when this tab starts or stops holding it.
function lockChanged(session, message) {
  clearInterval(poll);
  if (!session.mine && config.canEdit) poll = setInterval(() => lock.refresh(), config.pollMs);
  if (state && session.mine !== heldBefore) adopt(state, { keep: formValues() });
  settings.render();
  heldBefore = session.mine;
  renderLock(message);
}

async function takeLock({ takeOver = false, url = null } = {}) {
  const ok = url ? await breakLock(url) : await lock.take({ takeOver });
  if (ok) checkStale();
}

async function breakLock(url) {
  const res = await call(url, { method: "POST" });
  if (res.ok) lock.adopt(res.data.lock);
  else renderLock(res.data?.detail || "");
  return res.ok;
}

// Someone may have saved while this page was read-only: say so, and offer the latest.
// (Nothing is swapped under the user's eyes; a save from the old version gets a 409 anyway.)
async function checkStale() {
  const res = await call(config.urls.overrides);
  if (!res.ok || !state || res.data.version === state.version) return;
  const last = res.data.last_change || {};
  $("stale-text").textContent = `This agent changed since you opened it: version ${res.data.version} by ${last.by || "someone"}` +
    `${last.at ? ", " + ago(last.at) : ""}. You are looking at version ${state.version}.`;
  $("stale-note").hidden = false;
  $("stale-load").onclick = () => {
    $("stale-note").hidden = true;
    adopt(res.data, { keep: formValues() });
    setStatus(`Showing version ${res.data.version}.`, "");
    loadRevisions();
  };
}

// --- adding tools -------------------------------------------------------------------------
async function loadCatalog() {
  if (toolCatalog) return;
  toolCatalog = [];
  const res = await call(`${config.urls.tools}?limit=1000`);
  const tools = res.ok ? listOf(res.data) : [];
  // A code agent is shared by everyone: only shared (code) tools may join it.
  toolCatalog = tools.filter((t) => state.source !== "code" || t.source === "code");
  fill($("add-tool-name"), h("option", { value: "" }, "Choose a tool…"),
    toolCatalog.map((tool) => h("option", { value: tool.name, title: tool.description || "" }, tool.name)));
}

function addTool() {
  const name = $("add-tool-name").value;
  const key = $("add-tool-key").value.trim() || name;
  const problem = addToolProblem({ state, pending, name, key });
  $("add-tool-error").textContent = problem;
  if (!problem) {
    const tool = toolCatalog.find((t) => t.name === name);
    pending[key] = { tool: name, description: tool?.description || "" };
    $("add-tool-key").value = "";
    adopt(state, { keep: formValues() });
  }
}

// --- start --------------------------------------------------------------------------------
async function start() {
  const res = await call(config.urls.overrides);
  if (!res.ok) {
    $("lock-text").textContent = res.data?.detail || "This agent could not be loaded.";
    return;
  }
  adopt(res.data);
  if (config.canEdit) await lock.take();
  else renderLock();
  loadRevisions();
  $("editor-form").addEventListener("submit", save);
  $("editor-form").addEventListener("input", updateSaveButton);
  $("instructions-reset").addEventListener("click", () => resetField("instructions"));
  $("lock-take").addEventListener("click", () => takeLock({ takeOver: lock.heldByMyOtherSession }));
  $("add-tool-button").addEventListener("click", addTool);
  mountModelPicker($("field-model"));
  $("lock-break").addEventListener("click", () => {
    if (confirm(`Break ${lock.info?.holder}'s lock? Their unsaved work will be refused when they save.`)) takeLock({ url: config.urls.lockBreak });
  });
  window.addEventListener("pagehide", () => lock.release());
}

start();
