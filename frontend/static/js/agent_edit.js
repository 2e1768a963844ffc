// The agent editor page: instructions and tool descriptions under the agent's editor
// policy, with the edit lock (heartbeat), versioned saves (a 409 shows the current text and
// lets the user re-apply their change on top), reset to code, and revisions with diffs.
// The server decides what is editable and refuses stale saves; this page only shows it.

import { ApiError, api, csrfToken, listOf } from "./lib/api.js";

const config = JSON.parse(document.getElementById("editor-config").textContent);
const $ = (id) => document.getElementById(id);

const FIELD_LABELS = { tools: "tool membership", tool_descriptions: "tool descriptions" };
let pending = {}; // tools the user is adding: {key: {tool, description}}
let toolCatalog = null; // tools that may be added, from /api/tools/
let state = null; // the last editor state from the server (GET .../overrides/)
let base = null; // the form values that state corresponds to (to tell what the user changed)
let lock = { mine: false, info: null };
let heartbeat = null;
let poll = null;

// --- HTTP ---------------------------------------------------------------------------------
// Every answer as {ok, status, data}: refusals (409, 423, ...) carry the data this page shows.
async function call(url, { method = "GET", body } = {}) {
  try {
    return { ok: true, status: 200, data: await api(url, { method, body }) };
  } catch (err) {
    if (err instanceof ApiError) return { ok: false, status: err.status, data: err.body || { detail: err.message } };
    throw err;
  }
}

function releaseOnLeave() {
  // keepalive lets the request outlive the page; api() has no such option.
  fetch(`${config.urls.lock}?lock=${lock.info.id}`, { method: "DELETE", keepalive: true, credentials: "same-origin", headers: { "X-CSRFToken": csrfToken() } });
}

// --- values -------------------------------------------------------------------------------
const asText = (value) => (value == null ? "" : typeof value === "string" ? value : JSON.stringify(value, null, 2));
const when = (iso) => (iso ? new Date(iso).toLocaleString([], { dateStyle: "medium", timeStyle: "short" }) : "");
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
    (last ? ` · last changed by ${last.by || "someone"}, ${when(last.at)}` : " · never edited");
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
    `${last.by || "Someone"} saved version ${current.version} ${last.at ? "at " + when(last.at) : ""} ` +
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

// A line-level three-way merge: the edits base->mine and base->theirs, applied together.
// Returns null when they touch the same lines.
function merge3(baseText, mineText, theirsText) {
  const baseLines = baseText.split("\n");
  const hunks = [...hunksOf(baseText, mineText), ...hunksOf(baseText, theirsText)]
    .sort((a, b) => a.start - b.start || a.end - b.end);
  for (let k = 1; k < hunks.length; k++) {
    const [a, b] = [hunks[k - 1], hunks[k]];
    const same = a.start === b.start && a.end === b.end && a.lines.join("\n") === b.lines.join("\n");
    if (!same && (b.start < a.end || (a.start === b.start))) return null;
  }
  const out = [];
  let at = 0;
  let previous = null;
  for (const hunk of hunks) {
    if (previous && hunk.start === previous.start && hunk.end === previous.end) continue; // both made it
    out.push(...baseLines.slice(at, hunk.start), ...hunk.lines);
    at = hunk.end;
    previous = hunk;
  }
  out.push(...baseLines.slice(at));
  return out.join("\n");
}

function hunksOf(oldText, newText) {
  const hunks = [];
  let current = null;
  let at = 0; // index in the old lines
  for (const line of lineDiff(oldText, newText)) {
    if (line.op === "equal") {
      current = null;
      at += 1;
      continue;
    }
    if (!current) {
      current = { start: at, end: at, lines: [] };
      hunks.push(current);
    }
    if (line.op === "delete") {
      at += 1;
      current.end = at;
    } else {
      current.lines.push(line.text);
    }
  }
  return hunks;
}

async function resetField(field, key) {
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

// --- a line diff (LCS), for the conflict view; revisions use the server's diff ------------
function lineDiff(oldText, newText) {
  const a = oldText.split("\n");
  const b = newText.split("\n");
  const n = a.length;
  const m = b.length;
  const lcs = Array.from({ length: n + 1 }, () => new Uint32Array(m + 1));
  for (let i = n - 1; i >= 0; i--) {
    for (let j = m - 1; j >= 0; j--) lcs[i][j] = a[i] === b[j] ? lcs[i + 1][j + 1] + 1 : Math.max(lcs[i + 1][j], lcs[i][j + 1]);
  }
  const lines = [];
  let i = 0;
  let j = 0;
  while (i < n || j < m) {
    if (i < n && j < m && a[i] === b[j]) lines.push({ op: "equal", old: ++i, new: ++j, text: a[i - 1] });
    else if (j < m && (i >= n || lcs[i][j + 1] >= lcs[i + 1][j])) lines.push({ op: "insert", old: null, new: ++j, text: b[j - 1] });
    else lines.push({ op: "delete", old: ++i, new: null, text: a[i - 1] });
  }
  return lines;
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
    button.querySelector(".muted").textContent = `${rev.author || "someone"} · ${when(rev.created_at)}`;
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
function renderLock(message) {
  const bar = $("lockbar");
  const info = lock.info;
  let text;
  let mode;
  if (!config.canEdit) {
    text = "You can read this agent but not edit it.";
    mode = "readonly";
  } else if (lock.mine) {
    text = `You are editing. The lock is yours until ${when(info.expires_at)} and renews while this page is open.`;
    mode = "mine";
  } else if (info) {
    text = `Locked by ${info.holder} since ${when(info.acquired_at)}` +
      (info.expired ? " — the lock has expired." : ". Read-only until they finish.");
    mode = info.expired ? "expired" : "other";
  } else {
    text = "Nobody holds the lock.";
    mode = "free";
  }
  bar.dataset.mode = mode;
  $("lock-text").textContent = message ? `${message} ${text}` : text;
  $("lock-take").hidden = !(config.canEdit && !lock.mine && (!info || info.expired));
  $("lock-take").textContent = info ? "Take over" : "Start editing";
  $("lock-break").hidden = !(config.canEdit && config.canBreak && !lock.mine && info && !info.expired);
}

function becomeHolder(info) {
  lock = { mine: true, info };
  clearInterval(poll);
  clearInterval(heartbeat);
  heartbeat = setInterval(renew, config.heartbeatMs);
}

function becomeReader(info, message) {
  lock = { mine: false, info };
  clearInterval(heartbeat);
  clearInterval(poll);
  poll = setInterval(refreshLock, config.pollMs);
  renderLock(message);
}

async function takeLock(url = config.urls.lock) {
  const res = await call(url, { method: "POST" });
  if (res.ok) becomeHolder(res.data.lock);
  else becomeReader(res.data?.lock || null, res.status === 423 ? "" : res.data?.detail || "");
  if (state) {
    const keep = formValues();
    adopt(state, { keep });
    if (lock.mine) checkStale();
  }
  renderLock();
}

// Someone may have saved while this page was read-only: say so, and offer the latest.
// (Nothing is swapped under the user's eyes; a save from the old version gets a 409 anyway.)
async function checkStale() {
  const res = await call(config.urls.overrides);
  if (!res.ok || res.data.version === state.version) return;
  const last = res.data.last_change || {};
  $("stale-text").textContent =
    `This agent changed since you opened it: version ${res.data.version} by ${last.by || "someone"}` +
    `${last.at ? ", " + when(last.at) : ""}. You are looking at version ${state.version}.`;
  $("stale-note").hidden = false;
  $("stale-load").onclick = () => {
    $("stale-note").hidden = true;
    adopt(res.data, { keep: formValues() });
    setStatus(`Showing version ${res.data.version}.`, "");
    loadRevisions();
  };
}

async function renew() {
  const res = await call(config.urls.lock, { method: "PUT" });
  if (res.ok) {
    lock.info = res.data.lock;
    renderLock();
    return;
  }
  const keep = formValues();
  becomeReader(res.data?.lock || null, "You lost the edit lock.");
  adopt(state, { keep });
}

async function refreshLock() {
  const res = await call(config.urls.lock);
  if (res.ok) {
    lock.info = res.data.lock;
    renderLock();
  }
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
  if (config.canEdit) await takeLock();
  else renderLock();
  adopt(res.data);
  loadRevisions();
  $("editor-form").addEventListener("submit", save);
  $("editor-form").addEventListener("input", updateSaveButton);
  $("instructions-reset").addEventListener("click", () => resetField("instructions"));
  $("lock-take").addEventListener("click", () => takeLock());
  $("add-tool-button").addEventListener("click", addTool);
  $("lock-break").addEventListener("click", () => {
    if (confirm(`Break ${lock.info?.holder}'s lock? Their unsaved work will be refused when they save.`)) takeLock(config.urls.lockBreak);
  });
  window.addEventListener("pagehide", () => {
    if (lock.mine) releaseOnLeave();
  });
}

start();
