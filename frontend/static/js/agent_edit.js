// The agent editor page: instructions and tool descriptions under the agent's editor
// policy, with the edit lock (a session of this tab, lib/edit_lock.js), versioned saves (a
// 409 shows the current text and lets the user re-apply their change on top), reset to
// code, and revisions with diffs. The server decides what is editable and refuses stale
// saves and writes from any session but the lock's; this page only shows it.

import { ApiError, api, listOf } from "./lib/api.js";
import { EditLockSession } from "./lib/edit_lock.js";
import { fullTime, timeAgo } from "./lib/format.js";
import { lineDiff } from "./lib/line_diff.js";
import { merge3 } from "./lib/merge.js";

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
const asText = (value) => (value == null ? "" : typeof value === "string" ? value : JSON.stringify(value, null, 2));
const ago = (iso) => (iso ? timeAgo(iso) : "");
const editable = (field) => state.ownership[field] === "editor";

function valuesOf(s) {
  const descriptions = {};
  const active = {};
  for (const tool of s.tools) {
    descriptions[tool.key] = tool.description;
    active[tool.key] = tool.active;
  }
  return {
    name: s.name, model: s.model, description: s.description,
    instructions: asText(s.instructions.effective),
    format: typeof s.instructions.effective === "string" ? "text" : "json",
    descriptions, active,
  };
}

function formValues() {
  const values = structuredClone(base);
  values.instructions = $("field-instructions").value;
  for (const name of ["name", "model", "description"]) values[name] = $(`field-${name}`).value;
  for (const row of document.querySelectorAll(".tool-row")) {
    const key = row.dataset.key;
    values.descriptions[key] = row.querySelector("textarea").value;
    const toggle = row.querySelector("input[type=checkbox]");
    if (toggle) values.active[key] = toggle.checked;
  }
  return values;
}

function dirtyFields(values) {
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

function payload(values) {
  const data = { version: state.version };
  const dirty = dirtyFields(values);
  if (dirty.includes("instructions")) {
    data.instructions = values.format === "json" ? JSON.parse(values.instructions) : values.instructions;
  }
  for (const name of ["name", "model", "description"]) if (dirty.includes(name)) data[name] = values[name];
  const descriptions = {};
  for (const tool of allTools()) {
    if (!dirty.includes(`desc:${tool.key}`)) continue;
    const text = (values.descriptions[tool.key] || "").trim();
    descriptions[tool.key] = !text || text === tool.code_description.trim() ? null : text;
  }
  if (Object.keys(descriptions).length) data.tool_descriptions = descriptions;
  if (dirty.some((d) => d.startsWith("active:") || d.startsWith("add:"))) {
    const kept = allTools().filter((t) => values.active[t.key]);
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
  $("instructions-format").textContent = base.format === "json" ? "JSON (a list or a system message)" : "Text";
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
}

// The server's tool rows and the ones being added (origin "new").
function allTools() {
  const adding = Object.entries(pending).map(([key, p]) => ({
    key, tool: p.tool, origin: "new", active: true, code_description: p.description,
    description: p.description, overridden: false,
  }));
  return [...state.tools, ...adding];
}

function renderTools() {
  const list = $("tool-rows");
  list.replaceChildren();
  const membership = editable("tools");
  $("add-tool").hidden = !membership || !canWrite();
  if (membership && canWrite()) loadCatalog();
  $("tools-note").textContent = editable("tool_descriptions")
    ? "Descriptions the model sees. Empty = the tool's own description."
    : "Code owns the tool descriptions of this agent.";
  if (!allTools().length) list.append(Object.assign(document.createElement("li"), { className: "muted", textContent: "No tools." }));
  for (const tool of allTools()) {
    const li = document.createElement("li");
    li.className = "tool-row";
    li.dataset.key = tool.key;
    const head = document.createElement("div");
    head.className = "field-head";
    if (membership) {
      const toggle = document.createElement("input");
      toggle.type = "checkbox";
      toggle.checked = tool.active;
      toggle.title = "The agent has this tool";
      toggle.setAttribute("aria-label", `The agent has ${tool.key}`);
      toggle.disabled = !canWrite();
      toggle.addEventListener("change", () => {
        if (tool.origin !== "new") return updateSaveButton();
        delete pending[tool.key]; // un-adding a tool that was never saved
        adopt(state, { keep: formValues() });
      });
      head.append(toggle);
    }
    head.append(Object.assign(document.createElement("strong"), { textContent: tool.key }));
    head.append(Object.assign(document.createElement("code"), { className: "muted", textContent: tool.tool }));
    const badge = document.createElement("span");
    if (tool.origin === "new") setBadge(badge, "New · not saved yet", "badge-new");
    else if (!tool.active) setBadge(badge, "Removed", "badge-locked");
    else if (tool.origin === "added") setBadge(badge, "Added in the studio", "badge-new");
    else if (tool.overridden && state.source === "code") setBadge(badge, "Overridden", "badge-overridden");
    else setBadge(badge, "", "");
    head.append(badge, Object.assign(document.createElement("span"), { className: "grow" }));
    if (tool.overridden && state.source === "code" && editable("tool_descriptions")) {
      const reset = Object.assign(document.createElement("button"), {
        type: "button", className: "link-button", disabled: !canWrite(),
        textContent: tool.origin === "added" ? "Reset description" : "Reset to code",
      });
      reset.addEventListener("click", () => resetField("tool_descriptions", tool.key));
      head.append(reset);
    }
    const pair = document.createElement("div");
    pair.className = "side-by-side" + (tool.overridden && state.source === "code" ? " paired" : "");
    const area = Object.assign(document.createElement("textarea"), {
      rows: 2, value: tool.description, disabled: !canWrite() || !editable("tool_descriptions"),
    });
    area.setAttribute("aria-label", `Description of ${tool.key}`);
    area.addEventListener("input", updateSaveButton);
    pair.append(area);
    if (tool.overridden && state.source === "code") {
      const codeDesc = document.createElement("div");
      codeDesc.className = "code-pane";
      codeDesc.append(Object.assign(document.createElement("span"), { className: "pane-title", textContent: "Code value" }));
      codeDesc.append(Object.assign(document.createElement("pre"), { textContent: tool.code_description }));
      pair.append(codeDesc);
    }
    li.append(head, pair);
    list.append(li);
  }
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
    data = payload(values);
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
  // Re-applying replays the user's edit (from the text they started with) onto the current
  // text; when both touched the same lines, the user's lines win and the diff shows it.
  const merged = mine.instructions === base.instructions ? currentText : merge3(base.instructions, mine.instructions, currentText);
  const result = merged ?? mine.instructions;
  $("conflict-current").textContent = currentText;
  $("conflict-mine").textContent = mine.instructions;
  $("conflict-note").textContent = merged !== null
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

function renderDiff(container, entries) {
  container.replaceChildren();
  if (!entries.length) container.append(Object.assign(document.createElement("p"), { className: "muted", textContent: "No changes." }));
  for (const entry of entries) {
    const block = document.createElement("div");
    block.className = "diff-block";
    const title = Object.assign(document.createElement("div"), { className: "diff-field", textContent: entry.field });
    if (entry.note) title.append(Object.assign(document.createElement("span"), { className: "diff-note", textContent: ` · ${entry.note}` }));
    block.append(title);
    const table = document.createElement("table");
    table.className = "diff-table";
    for (const line of entry.lines) {
      const tr = document.createElement("tr");
      tr.className = `diff-${line.op}`;
      const sign = line.op === "insert" ? "+" : line.op === "delete" ? "−" : " ";
      for (const text of [line.old ?? "", line.new ?? "", sign, line.text]) {
        tr.append(Object.assign(document.createElement("td"), { textContent: text }));
      }
      table.append(tr);
    }
    block.append(table);
    container.append(block);
  }
}

// --- revisions ----------------------------------------------------------------------------
let selectedRevision = null;

async function loadRevisions() {
  const list = $("revision-list");
  if (!config.canViewRevisions) {
    list.innerHTML = "<li class='muted'>Reading revisions needs the view permission.</li>";
    return;
  }
  const res = await call(config.urls.revisions);
  list.replaceChildren();
  const items = res.ok ? res.data.results : [];
  if (!items.length) list.append(Object.assign(document.createElement("li"), { className: "muted", textContent: "No revisions yet." }));
  for (const rev of items) {
    const li = document.createElement("li");
    const button = Object.assign(document.createElement("button"), { type: "button", className: "revision" });
    button.dataset.id = rev.id;
    const kind = rev.kind === "save" ? "" : ` · ${rev.kind}`;
    button.innerHTML = "<strong></strong> <span class='muted'></span><br><span class='fields'></span>";
    button.querySelector("strong").textContent = `v${rev.version}${kind}`;
    button.querySelector(".muted").textContent = `${rev.author || "someone"} · ${ago(rev.created_at)}`;
    button.title = fullTime(rev.created_at);
    button.querySelector(".fields").textContent = rev.fields.join(", ");
    button.classList.toggle("selected", rev.id === selectedRevision);
    button.addEventListener("click", () => showRevision(rev.id));
    li.append(button);
    list.append(li);
  }
}

async function showRevision(id) {
  const res = await call(`${config.urls.revisions}${id}/`);
  if (!res.ok) return;
  const rev = res.data;
  selectedRevision = id;
  for (const b of document.querySelectorAll(".revision")) b.classList.toggle("selected", b.dataset.id === String(id));
  $("revision-detail").hidden = false;
  $("revision-title").textContent = `Version ${rev.version} by ${rev.author || "someone"}`;
  renderDiff($("revision-diff"), rev.diff);
  const restore = $("revision-restore");
  restore.disabled = !canWrite() || rev.version === state.version;
  restore.onclick = async () => {
    if (!confirm(`Restore version ${rev.version}? It becomes a new version; nothing is lost.`)) return;
    const out = await call(`${config.urls.revisions}${id}/restore`, { method: "POST", body: { version: state.version } });
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
function lockText() {
  const info = lock.info;
  if (!config.canEdit) return ["readonly", "You can read this agent but not edit it."];
  if (lock.mine) {
    return ["mine", `You are editing in this tab (lock taken ${ago(info.acquired_at)}). It renews while this page is open.`];
  }
  if (lock.heldByMyOtherSession && info && !info.expired) {
    return ["yours", `You are editing this agent in another tab or window (since ${ago(info.acquired_at)}). ` +
      "This tab is read-only; take over to edit here (the other tab becomes read-only)."];
  }
  if (info) {
    const text = `Locked by ${info.holder} since ${ago(info.acquired_at)}`;
    return info.expired ? ["expired", `${text} — the lock has expired.`] : ["other", `${text}. Read-only until they finish.`];
  }
  return ["free", "Nobody holds the lock."];
}

function renderLock(message = "") {
  const [mode, text] = lockText();
  const info = lock.info;
  $("lockbar").dataset.mode = mode;
  $("lock-text").textContent = message ? `${message} ${text}` : text;
  $("lock-text").title = info ? `Taken ${fullTime(info.acquired_at)}, expires ${fullTime(info.expires_at)}` : "";
  const take = $("lock-take");
  take.hidden = !(config.canEdit && (mode === "yours" || mode === "expired" || mode === "free"));
  take.textContent = mode === "yours" ? "Take over here" : mode === "free" ? "Start editing" : "Take over";
  $("lock-break").hidden = !(config.canEdit && config.canBreak && mode === "other");
}

// The lock changed (taken, renewed, lost to another session): the form is rendered again,
// the user's values kept, only when this tab starts or stops holding it.
function lockChanged(session, message) {
  clearInterval(poll);
  if (!session.mine && config.canEdit) poll = setInterval(() => lock.refresh(), config.pollMs);
  if (state && session.mine !== heldBefore) adopt(state, { keep: formValues() });
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
  $("stale-text").textContent =
    `This agent changed since you opened it: version ${res.data.version} by ${last.by || "someone"}` +
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
  const select = $("add-tool-name");
  select.replaceChildren(new Option("Choose a tool…", ""));
  for (const tool of toolCatalog) {
    const option = new Option(tool.name, tool.name);
    option.title = tool.description || "";
    select.append(option);
  }
}

function addTool() {
  const name = $("add-tool-name").value;
  const key = $("add-tool-key").value.trim() || name;
  const error = $("add-tool-error");
  const taken = allTools().some((t) => t.key === key && t.active !== false) || key in pending;
  if (!name) error.textContent = "Choose a tool.";
  else if (!/^[A-Za-z0-9_-]{1,64}$/.test(key)) error.textContent = "A key uses letters, digits, _ and -.";
  else if (taken) error.textContent = `The agent already has a tool named ${key}.`;
  else {
    error.textContent = "";
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
  $("lock-break").addEventListener("click", () => {
    if (confirm(`Break ${lock.info?.holder}'s lock? Their unsaved work will be refused when they save.`)) takeLock({ url: config.urls.lockBreak });
  });
  window.addEventListener("pagehide", () => lock.release());
}

start();
