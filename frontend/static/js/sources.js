// The tool sources page (/sources/): import OpenAPI specs (and re-import with a diff),
// register MCP servers and pick their tools, add A2A agents. Talks to /api/sources/...
import { api, ApiError } from "./lib/api.js";
import { h } from "./lib/dom.js";
import { formatJson, fullTime } from "./lib/format.js";
import { serverSignin } from "./lib/tool_connection.js";

const $ = (sel, root = document) => root.querySelector(sel);
const $$ = (sel, root = document) => [...root.querySelectorAll(sel)];

function serverHint(preview) {
  return (preview.servers || []).length > 1
    ? `The spec declares ${preview.servers.length} servers; the tools call the one chosen here.`
    : "The tools call this URL.";
}

const toolLink = (name) => h("a", { class: "chip tool-chip", href: `/tools/${encodeURIComponent(name)}/` }, name);
const KIND_LABEL = { openapi: "OpenAPI", mcp: "MCP", a2a: "A2A" };

// --- errors ----------------------------------------------------------------------------
function showErrors(box, err) {
  box.hidden = false;
  box.replaceChildren();
  const body = err instanceof ApiError ? err.body || {} : {};
  box.append(h("p", { class: "error-title" }, err.message));
  const list = body.errors || [];
  const fields = err instanceof ApiError ? err.fieldErrors : {};
  if (list.length || Object.keys(fields).length) {
    box.append(h("ul", { class: "error-list" },
      list.map((e) => h("li", {}, h("code", {}, e.path), " ", e.message)),
      Object.entries(fields).map(([k, v]) => h("li", {}, h("code", {}, k), " ", v))));
  }
}

function clearErrors(box) { box.hidden = true; box.replaceChildren(); }

async function busy(button, fn) {
  button.disabled = true;
  const label = button.textContent;
  button.textContent = "Working…";
  try { return await fn(); } finally { button.disabled = false; button.textContent = label; }
}

function parseHeaders(text) {
  const headers = {};
  for (const line of (text || "").split("\n")) {
    if (!line.trim()) continue;
    const at = line.indexOf(":");
    if (at < 1) throw new Error(`Header line "${line.trim()}" needs the form Name: value`);
    headers[line.slice(0, at).trim()] = line.slice(at + 1).trim();
  }
  return headers;
}

// --- the list of sources ---------------------------------------------------------------
async function loadSources() {
  const sources = await api("/api/sources/");
  $("#source-count").textContent = sources.length ? `(${sources.length})` : "";
  const list = $("#source-cards");
  list.replaceChildren();
  if (!sources.length) list.append(h("li", { class: "muted" }, "No sources yet: import a spec, register a server or add an agent."));
  for (const source of sources) list.append(sourceCard(source));
}

function sourceCard(source) {
  const actions = h("div", { class: "card-actions" });
  if (source.kind === "openapi") {
    // A connector's source updates from the spec the studio ships; others take a new spec.
    const label = source.config.connector ? "Update" : "Re-import";
    actions.append(h("button", { class: "link-button", onclick: () => startReimport(source) }, label));
  }
  if (source.kind === "mcp") {
    actions.append(
      h("button", { class: "link-button", onclick: () => showMcpPick(source) }, "Pick tools"),
      h("button", { class: "link-button", onclick: (e) => refreshMcp(source, e.target) }, "Refresh"));
  }
  actions.append(h("button", { class: "link-button danger", onclick: () => deleteSource(source) }, "Delete"));
  const when = fullTime(source.imported_at);
  return h("li", { class: "source-card", "data-source": source.id },
    h("div", { class: "card-head" },
      h("strong", {}, source.name),
      h("span", { class: `kind kind-${source.kind}` }, KIND_LABEL[source.kind] || source.kind)),
    source.url ? h("div", { class: "source-url", title: source.url }, source.url) : null,
    h("div", { class: "muted small" }, when ? `Imported ${when}` : "",
      source.has_credentials ? " · credentials set" : "",
      source.config.connector ? h("span", {}, " · from the ", h("a", { href: `/connectors/#${source.config.connector}` }, "connector")) : null),
    source.tools.length
      ? h("div", { class: "chips" }, source.tools.map((t) => toolLink(t.name)))
      : h("div", { class: "muted small" }, "No tools exposed yet."),
    source.config.auth ? serverSignin(source) : null,
    actions);
}

async function deleteSource(source) {
  if (!confirm(`Delete "${source.name}" and its ${source.tools.length} tool(s)?`)) return;
  await api(`/api/sources/${source.id}/`, { method: "DELETE" });
  await loadSources();
}

// --- tabs ------------------------------------------------------------------------------
function selectTab(name) {
  for (const tab of $$(".tab")) {
    const on = tab.dataset.tab === name;
    tab.classList.toggle("is-active", on);
    tab.setAttribute("aria-selected", String(on));
  }
  for (const panel of $$(".tab-panel")) panel.hidden = panel.dataset.panel !== name;
}

// --- OpenAPI ---------------------------------------------------------------------------
let reimportSource = null;

function specMode() { return $("input[name=spec-mode]:checked").value; }

async function specPayload() {
  if (reimportSource && reimportSource.config.connector) return {};  // the shipped spec
  const mode = specMode();
  if (mode === "url") return { url: $("#spec-url").value.trim() };
  if (mode === "file") {
    const file = $("#spec-file").files[0];
    if (!file) throw new Error("Choose a file first.");
    return { text: await file.text() };
  }
  return { text: $("#spec-text").value };
}

function startReimport(source) {
  selectTab("openapi");
  reimportSource = source;
  $("#openapi-title").textContent = `Re-import "${source.name}"`;
  $("#openapi-hint").textContent = "Give the new version of the spec; you will see what changed per operation before anything is updated.";
  $("#reimport-cancel").hidden = false;
  if (source.url) {
    $("input[name=spec-mode][value=url]").checked = true;
    $("#spec-url").value = source.url;
    syncSpecMode();
  }
  $("#spec-preview").textContent = "Show changes";
  $("#spec-preview-box").hidden = true;
  if (source.config.connector) {
    $("#openapi-title").textContent = `Update "${source.name}"`;
    $("#openapi-hint").textContent = "The connector's spec as this studio ships it: see what changed per operation before anything is updated.";
    for (const box of $$("[data-mode], .segmented")) box.hidden = true;
    busy($("#spec-preview"), previewSpec);
  }
}

function endReimport() {
  reimportSource = null;
  $("#openapi-title").textContent = "Import an OpenAPI spec";
  $("#openapi-hint").textContent = "OpenAPI 3.0, 3.1 or Swagger 2.0, as JSON or YAML. Each operation you pick becomes a tool.";
  $("#reimport-cancel").hidden = true;
  $("#spec-preview").textContent = "Validate & preview";
  $(".segmented").hidden = false;
  syncSpecMode();
}

function syncSpecMode() {
  for (const box of $$("[data-mode]")) box.hidden = box.dataset.mode !== specMode();
}

async function previewSpec() {
  const errors = $("#spec-errors");
  const box = $("#spec-preview-box");
  clearErrors(errors);
  box.hidden = true;
  try {
    const payload = await specPayload();
    if (reimportSource) {
      const diff = await api(`/api/sources/${reimportSource.id}/openapi/diff`, { method: "POST", body: payload });
      renderDiff(diff, payload);
    } else {
      renderPreview(await api("/api/sources/openapi/preview", { method: "POST", body: payload }), payload);
    }
    box.hidden = false;
  } catch (err) {
    showErrors(errors, err);
  }
}

const methodBadge = (method) => h("span", { class: `method method-${method.toLowerCase()}` }, method);

function renderPreview(preview, payload) {
  const box = $("#spec-preview-box");
  const rows = preview.operations.map((op) => h("tr", { "data-key": op.key },
    h("td", {}, h("input", { type: "checkbox", class: "op-pick", "aria-label": `Pick ${op.key}` })),
    h("td", { class: "nowrap" }, methodBadge(op.method), " ", h("code", {}, op.path)),
    h("td", {}, h("input", { class: "op-name code", value: op.suggested_name, "aria-label": `Tool name for ${op.key}` }),
      op.name_taken ? h("div", { class: "warn small" }, "name taken: change it") : null),
    h("td", { class: "op-desc" }, op.summary || h("span", { class: "muted" }, op.description),
      op.auth ? h("span", { class: "badge auth-badge" }, op.auth.replace("_", " ")) : null,
      (op.notes || []).map((note) => h("div", { class: "warn small" }, note)))));
  const auths = new Set(preview.operations.map((op) => op.auth).filter(Boolean));
  const creds = h("div", { class: "creds" });
  const credField = (name, label, type = "password") => h("label", {}, label, type === "pem"
    ? h("textarea", { name, rows: 3, spellcheck: "false", placeholder: "-----BEGIN ...", "data-cred": name })
    : h("input", { type, name, autocomplete: "off", "data-cred": name }));
  if (auths.has("api_key")) creds.append(credField("api_key", "API key"));
  if (auths.has("bearer")) creds.append(credField("token", "Bearer token"));
  if (auths.has("basic")) creds.append(credField("username", "User name", "text"), credField("password", "Password"));
  // OAuth 2.0 (docs/tools.md, "Authentication"): the authorization code flow is then
  // connected per user on each tool's page; TLS material applies to every type.
  if ([...auths].some((a) => a.startsWith("oauth2_"))) creds.append(credField("client_id", "Client id", "text"), credField("client_secret", "Client secret"));
  if (auths.has("jwt_bearer")) creds.append(credField("private_key", "Private key (PEM)", "pem"));
  if (preview.operations.length) creds.append(h("details", { class: "tls-creds" }, h("summary", {}, "TLS: private CA, client certificate"),
    credField("ca_bundle", "CA bundle (PEM)", "pem"), credField("client_cert", "Client certificate (PEM)", "pem"), credField("client_key", "Client key (PEM)", "pem")));
  const importButton = h("button", { class: "primary", id: "spec-import" }, "Import selected");
  const count = h("span", { class: "muted", id: "pick-count" }, "0 selected");
  box.replaceChildren(
    h("div", { class: "preview-head" },
      h("h3", {}, preview.title, " ", h("span", { class: "muted" }, `OpenAPI ${preview.version}`)),
      h("label", { class: "inline" }, "Base URL ",
        h("input", { id: "base-url", class: "code", value: preview.base_url, list: "server-urls", title: serverHint(preview), "data-url-check": true }),
        h("datalist", { id: "server-urls" }, (preview.servers || []).map((url) => h("option", { value: url }))),
        (preview.servers || []).length > 1 ? h("span", { class: "muted", id: "server-count" }, ` ${preview.servers.length} servers declared: pick one or type another`) : null)),
    h("table", { class: "ops" },
      h("thead", {}, h("tr", {},
        h("th", {}, h("input", { type: "checkbox", id: "pick-all", "aria-label": "Pick all" })),
        h("th", {}, "Operation"), h("th", {}, "Tool name"), h("th", {}, "Summary"))),
      h("tbody", {}, rows)),
    creds.childElementCount ? h("fieldset", { class: "cred-box" },
      h("legend", {}, "Credentials (stored encrypted on each tool, never shown again)"), creds) : null,
    h("div", { class: "actions" }, importButton, count),
    h("div", { id: "import-result" }));
  const updateCount = () => { count.textContent = `${$$(".op-pick:checked", box).length} selected`; };
  box.addEventListener("change", updateCount);
  $("#pick-all").addEventListener("change", (e) => {
    for (const cb of $$(".op-pick", box)) cb.checked = e.target.checked;
    updateCount();
  });
  importButton.addEventListener("click", () => busy(importButton, () => importSpec(payload)));
}

async function importSpec(payload) {
  const box = $("#spec-preview-box");
  const errors = $("#spec-errors");
  clearErrors(errors);
  const picks = $$("tbody tr", box).filter((tr) => $(".op-pick", tr).checked)
    .map((tr) => ({ key: tr.dataset.key, name: $(".op-name", tr).value.trim() }));
  if (!picks.length) { showErrors(errors, new Error("Pick at least one operation.")); return; }
  const credentials = {};
  for (const input of $$("[data-cred]", box)) if (input.value) credentials[input.dataset.cred] = input.value;
  const body = { ...payload, picks, base_url: $("#base-url").value.trim() };
  if (Object.keys(credentials).length) body.credentials = credentials;
  try {
    const source = await api("/api/sources/openapi/import", { method: "POST", body });
    box.replaceChildren(h("div", { class: "success" },
      h("p", {}, `Imported ${source.tools.length} tool(s) from "${source.name}". Open one to test it in the console:`),
      h("div", { class: "chips" }, source.tools.map((t) => toolLink(t.name)))));
    await loadSources();
  } catch (err) {
    showErrors(errors, err);
    markPickErrors(err, picks);
  }
}

function markPickErrors(err, picks) {
  for (const e of (err.body && err.body.errors) || []) {
    const match = /^\$\.(picks|add)\[(\d+)\]/.exec(e.path);
    if (!match) continue;
    const row = $(`tr[data-key="${CSS.escape(picks[Number(match[2])].key)}"]`);
    if (row) row.classList.add("row-error");
  }
}

function renderDiff(diff, payload) {
  const box = $("#spec-preview-box");
  // Operations without a tool (new ones, or ones not picked before) can be added now.
  const addable = (op) => !op.tool && op.status !== "removed";
  const order = { changed: 0, added: 1, removed: 2, unchanged: 3 };
  const operations = [...diff.operations].sort((a, b) => order[a.status] - order[b.status]);
  const rows = operations.map((op) => h("tr", { "data-key": op.key, class: `diff-${op.status}` },
    h("td", {}, addable(op)
      ? h("input", { type: "checkbox", class: "op-pick", "aria-label": `Add ${op.key}` }) : null),
    h("td", {}, h("span", { class: `status status-${op.status}` }, op.status)),
    h("td", { class: "nowrap" }, h("code", {}, op.key)),
    h("td", {}, op.tool ? toolLink(op.tool) : addable(op)
      ? h("input", { class: "op-name code", value: op.suggested_name, "aria-label": `Tool name for ${op.key}` })
      : h("span", { class: "muted" }, "not imported")),
    h("td", {}, op.changes.length ? h("ul", { class: "changes" }, op.changes.map((c) => h("li", {}, c))) : "")));
  const counts = {};
  for (const op of diff.operations) counts[op.status] = (counts[op.status] || 0) + 1;
  const apply = h("button", { class: "primary", id: "reimport-apply" }, "Apply changes");
  box.replaceChildren(
    h("h3", {}, "What changes ", h("span", { class: "muted" },
      Object.entries(counts).map(([k, v]) => `${v} ${k}`).join(" · "))),
    h("table", { class: "ops" }, h("thead", {}, h("tr", {},
      h("th", {}, "Add"), h("th", {}, "Status"), h("th", {}, "Operation"), h("th", {}, "Tool"),
      h("th", {}, "What changed"))), h("tbody", {}, rows)),
    h("p", { class: "muted small" }, "Applying updates the tools of changed operations and retires the tools of removed ones."),
    h("div", { class: "actions" }, apply));
  apply.addEventListener("click", () => busy(apply, async () => {
    const add = $$("tbody tr", box).filter((tr) => $(".op-pick", tr)?.checked)
      .map((tr) => ({ key: tr.dataset.key, name: $(".op-name", tr).value.trim() }));
    try {
      const result = await api(`/api/sources/${reimportSource.id}/openapi/reimport`,
        { method: "POST", body: { ...payload, add } });
      box.replaceChildren(h("div", { class: "success" },
        h("p", {}, `Updated: ${result.updated.join(", ") || "none"} · retired: ${result.retired.join(", ") || "none"} · added: ${result.added.join(", ") || "none"}`)));
      endReimport();
      await loadSources();
    } catch (err) {
      showErrors($("#spec-errors"), err);
    }
  }));
}

// --- MCP -------------------------------------------------------------------------------
async function registerMcp(event) {
  event.preventDefault();
  const form = event.target;
  const errors = $("#mcp-errors");
  clearErrors(errors);
  await busy($("button[type=submit]", form), async () => {
    try {
      const data = Object.fromEntries(new FormData(form));
      const body = { url: data.url, transport: data.transport, name: data.name, headers: parseHeaders(data.headers) };
      if (data.client_id) body.oauth = { client_id: data.client_id, client_secret: data.client_secret };
      const source = await api("/api/sources/mcp/", { method: "POST", body });
      form.reset();
      await loadSources();
      if (source.config.auth && !source.remote_tools.length) {
        selectTab("mcp");
        $("#mcp-pick-box").hidden = false;
        $("#mcp-pick-box").replaceChildren(h("p", { class: "success", id: "mcp-signin-needed" },
          `"${source.name}" signs in with its own OAuth: connect your account on its card, then press Refresh to list its tools.`));
      } else showMcpPick(source);
    } catch (err) {
      showErrors(errors, err);
    }
  });
}

function showMcpPick(source) {
  selectTab("mcp");
  const box = $("#mcp-pick-box");
  const exposed = new Set(source.tools.map((t) => t.key));
  const rows = (source.remote_tools || []).map((tool) => h("tr", { "data-remote": tool.name },
    h("td", {}, exposed.has(tool.name) ? h("span", { class: "badge badge-set" }, "exposed")
      : h("input", { type: "checkbox", class: "op-pick", "aria-label": `Expose ${tool.name}` })),
    h("td", {}, h("code", {}, tool.name)),
    h("td", {}, exposed.has(tool.name) ? "" : h("input", { class: "op-name code", value: tool.name.toLowerCase().replace(/[^a-z0-9_]+/g, "_"), "aria-label": `Tool name for ${tool.name}` })),
    h("td", {}, tool.description || h("span", { class: "muted" }, "no description"),
      h("details", {}, h("summary", {}, "input schema"), h("pre", {}, formatJson(tool.input_schema))))));
  const expose = h("button", { class: "primary" }, "Expose selected");
  box.replaceChildren(
    h("h3", {}, `Tools of ${source.name}`),
    h("table", { class: "ops" }, h("thead", {}, h("tr", {}, h("th", {}, ""), h("th", {}, "Remote tool"),
      h("th", {}, "Tool name"), h("th", {}, "Description"))), h("tbody", {}, rows)),
    h("div", { class: "actions" }, expose),
    h("div", { id: "mcp-result" }));
  box.hidden = false;
  expose.addEventListener("click", () => busy(expose, async () => {
    const picks = $$("tbody tr", box).filter((tr) => $(".op-pick", tr)?.checked)
      .map((tr) => ({ remote_name: tr.dataset.remote, name: $(".op-name", tr).value.trim() }));
    try {
      const result = await api(`/api/sources/${source.id}/mcp/pick`, { method: "POST", body: { picks } });
      $("#mcp-result").replaceChildren(h("div", { class: "success" }, "Exposed: ", result.tools.map(toolLink)));
      await loadSources();
    } catch (err) {
      showErrors($("#mcp-errors"), err);
    }
  }));
}

async function refreshMcp(source, button) {
  await busy(button, async () => {
    try {
      const { changes, source: fresh } = await api(`/api/sources/${source.id}/mcp/refresh`, { method: "POST" });
      await loadSources();
      showMcpPick(fresh);
      $("#mcp-result").replaceChildren(h("div", { class: "success" },
        `Refreshed: ${changes.added.length} new, ${changes.removed.length} gone, ${changes.changed.length} changed on the server; updated ${changes.updated.length}, retired ${changes.retired.length}.`));
    } catch (err) {
      selectTab("mcp");
      showErrors($("#mcp-errors"), err);
    }
  });
}

// --- A2A -------------------------------------------------------------------------------
async function addA2A(event) {
  event.preventDefault();
  const form = event.target;
  const errors = $("#a2a-errors");
  clearErrors(errors);
  await busy($("button[type=submit]", form), async () => {
    try {
      const data = Object.fromEntries(new FormData(form));
      const body = { card_url: data.card_url, name: data.name, headers: parseHeaders(data.headers) };
      if (data.timeout_seconds) body.timeout_seconds = Number(data.timeout_seconds);
      const result = await api("/api/sources/a2a/", { method: "POST", body });
      form.reset();
      $("#a2a-done").hidden = false;
      $("#a2a-done").replaceChildren(h("div", { class: "success" },
        `Added "${result.source.name}" as the tool `, toolLink(result.tool), "."));
      await loadSources();
    } catch (err) {
      showErrors(errors, err);
    }
  });
}

// --- wiring ----------------------------------------------------------------------------
for (const tab of $$(".tab")) tab.addEventListener("click", () => selectTab(tab.dataset.tab));
for (const radio of $$("input[name=spec-mode]")) radio.addEventListener("change", syncSpecMode);
$("#spec-preview").addEventListener("click", (e) => busy(e.target, previewSpec));
$("#reimport-cancel").addEventListener("click", () => { endReimport(); $("#spec-preview-box").hidden = true; });
$("#mcp-form").addEventListener("submit", registerMcp);
$("#a2a-form").addEventListener("submit", addA2A);
loadSources().catch((err) => {
  $("#source-cards").replaceChildren(h("li", { class: "error" }, err.message));
}).finally(() => { $("#sources-app").dataset.ready = "1"; });
