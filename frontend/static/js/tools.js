// The tool panel (/tools/, /tools/new/, /tools/<name>/, /tools/<name>/edit/): the list of
// tools with search and a type filter, a tool's page with its "Test tool" console, and the
// create / edit form. Navigation between them stays in the page (history.pushState).

import { api, ApiError, listOf } from "./lib/api.js";
import { fill, h } from "./lib/dom.js";
import { formatJson } from "./lib/format.js";
import { kindLabel, orderSchema } from "./lib/tool_display.js";
import { openConsole } from "./tools_console.js";
import { renderToolForm } from "./tools_form.js";
import { verdictLine } from "./lib/url_check.js";
import { showConnection } from "./lib/tool_connection.js";

const app = document.getElementById("tools-app");
const main = document.getElementById("tool-main");
const index = document.getElementById("tool-index");
const search = document.getElementById("tool-search");
const filter = document.getElementById("kind-filter");

const state = { tools: [], types: [], kind: "", query: "", console: null };

const typeOf = (kind) => state.types.find((t) => t.kind === kind);
const toolUrl = (name) => `/tools/${encodeURIComponent(name)}/`;

// --- routing -------------------------------------------------------------------------------
function route() {
  const parts = location.pathname.replace(/^\/tools\/?/, "").split("/").filter(Boolean).map(decodeURIComponent);
  if (parts[0] === "new" && parts.length === 1) return { view: "new" };
  if (parts.length === 0) return { view: "index" };
  return { view: parts[1] === "edit" ? "edit" : "detail", name: parts[0] };
}

export function navigate(url, { replace = false } = {}) {
  if (replace) history.replaceState({}, "", url);
  else history.pushState({}, "", url);
  render();
}

document.addEventListener("click", (event) => {
  const link = event.target.closest("a[data-nav]");
  if (!link || event.metaKey || event.ctrlKey || event.shiftKey || event.button !== 0) return;
  event.preventDefault();
  navigate(link.getAttribute("href"));
});
window.addEventListener("popstate", render);

// --- the list ------------------------------------------------------------------------------
function renderFilter() {
  const kinds = [...new Set(state.tools.map((t) => t.kind))].sort();
  const chip = (kind, label) => h("button", {
    type: "button", class: `filter-chip${state.kind === kind ? " is-active" : ""}`,
    "data-kind": kind, "aria-pressed": String(state.kind === kind),
    onclick: () => { state.kind = kind; renderFilter(); renderIndex(); },
  }, label, h("span", { class: "filter-count" },
    String(kind ? state.tools.filter((t) => t.kind === kind).length : state.tools.length)));
  fill(filter, chip("", "All"), ...kinds.map((k) => chip(k, kindLabel(k))));
}

function matches(tool) {
  if (state.kind && tool.kind !== state.kind) return false;
  const q = state.query.trim().toLowerCase();
  return !q || tool.name.toLowerCase().includes(q) || (tool.description || "").toLowerCase().includes(q);
}

function renderIndex() {
  const current = route().name;
  const shown = state.tools.filter(matches);
  document.getElementById("tool-count").textContent = String(state.tools.length);
  if (!shown.length) {
    fill(index, h("li", { class: "muted tool-index-empty" },
      state.tools.length ? "No tool matches." : "No tools yet: create the first one."));
    return;
  }
  fill(index, ...shown.map((tool) => h("li", {},
    h("a", {
      href: toolUrl(tool.name), "data-nav": true, "data-tool": tool.name,
      class: `tool-row${tool.name === current ? " is-current" : ""}`,
      "aria-current": tool.name === current ? "page" : null,
    },
    h("span", { class: "tool-row-head" },
      h("span", { class: "tool-row-name" }, tool.name),
      h("span", { class: `kind kind-${tool.kind}` }, kindLabel(tool.kind))),
    tool.description ? h("span", { class: "tool-row-desc" }, tool.description) : null))));
}

search.addEventListener("input", () => { state.query = search.value; renderIndex(); });

// --- pages ---------------------------------------------------------------------------------
function closeConsole() {
  state.console?.close();
  state.console = null;
}

async function render() {
  closeConsole();
  const where = route();
  renderIndex();
  if (where.view === "index") return renderWelcome();
  if (where.view === "new") {
    const kind = new URLSearchParams(location.search).get("kind");
    return renderToolForm(main, { types: state.types, kind, onSaved: saved, onCancel: () => navigate("/tools/") });
  }
  let tool = state.tools.find((t) => t.name === where.name);
  try {
    // Always fetch the tool itself: the list may be stale (someone else edited it).
    tool = await api(`/api/tools/${encodeURIComponent(where.name)}/`);
  } catch (err) {
    if (!tool) return renderMissing(where.name, err);
  }
  document.title = `${tool.name} · Tools · Agent Studio`;
  if (where.view === "edit" && tool.source !== "studio") {
    // Code and built-in tools are edited in code (or through the agent editor's overrides).
    return navigate(toolUrl(tool.name), { replace: true });
  }
  if (where.view === "edit") {
    return renderToolForm(main, {
      types: state.types, tool, onSaved: saved, onCancel: () => navigate(toolUrl(tool.name)),
    });
  }
  renderDetail(tool);
}

function saved(tool, { created, oldName }) {
  const others = state.tools.filter((t) => t.name !== tool.name && t.name !== oldName);
  state.tools = [...others, tool].sort((a, b) => a.name.localeCompare(b.name));
  renderFilter();
  navigate(toolUrl(tool.name), { replace: !created });
}

function renderMissing(name, err) {
  fill(main, h("div", { class: "tools-empty" },
    h("h2", {}, err instanceof ApiError && err.status === 404 ? `No tool named “${name}”` : "Could not load the tool"),
    h("p", { class: "muted" }, err.message),
    h("a", { href: "/tools/", "data-nav": true }, "← All tools")));
}

function renderWelcome() {
  document.title = "Tools · Agent Studio";
  const creatable = state.types.filter((t) => t.creatable);
  fill(main, h("div", { class: "tools-welcome" },
    h("h2", {}, "Build and test tools"),
    h("p", { class: "muted" },
      "Pick a tool on the left to see its schema and test it with JSON input, or create a new one. ",
      "Tools defined in code and the built-in system tools are listed too; add any tool to an agent from the ",
      h("a", { href: "/" }, "agents page"), "."),
    creatable.length ? h("div", { class: "type-grid" }, creatable.map((type) => h("a", {
      class: "type-card", href: `/tools/new/?kind=${encodeURIComponent(type.kind)}`, "data-nav": true,
    }, h("span", { class: `kind kind-${type.kind}` }, kindLabel(type.kind)), h("strong", {}, type.label),
    h("span", { class: "muted" }, `Create a ${kindLabel(type.kind)} tool →`)))) : null));
}

function fact(label, value) {
  return h("div", { class: "fact" }, h("dt", {}, label), h("dd", {}, value));
}

function renderDetail(tool) {
  const type = typeOf(tool.kind);
  const editable = tool.source === "studio";
  const consoleSlot = h("div", { id: "console-slot" });
  const usedBy = h("section", { class: "used-by", id: "used-by" });
  const testButton = h("button", {
    type: "button", class: "primary", id: "test-tool", "aria-expanded": "false",
    onclick: () => toggleConsole(tool, consoleSlot, testButton),
  }, "▶ Test tool");
  const actions = h("div", { class: "tool-actions" }, testButton,
    editable ? h("a", { class: "button secondary", href: `${toolUrl(tool.name)}edit/`, "data-nav": true, id: "edit-tool" }, "Edit") : null,
    editable ? h("button", { type: "button", class: "secondary danger", id: "delete-tool", onclick: () => deleteTool(tool) }, "Delete") : null);
  const schemaCard = (title, schema, id) => h("section", { class: "schema-card", id },
    h("h3", {}, title),
    schema ? h("pre", { class: "json" }, formatJson(orderSchema(schema))) : h("p", { class: "muted" }, "Not declared: any output is accepted."));
  fill(main,
    h("header", { class: "tool-head" },
      h("div", { class: "tool-title" },
        h("h2", { id: "tool-title" }, tool.name),
        h("div", { class: "tool-badges" },
          h("span", { class: `kind kind-${tool.kind}`, title: type?.label || tool.kind }, type?.label || kindLabel(tool.kind)),
          tool.kind !== "code" ? h("span", { class: `badge badge-${tool.source}` }, tool.source === "code" ? "built in" : "studio") : null,
          tool.execution_mode === "async" ? h("span", { class: "badge badge-async" }, "async") : null),
        tool.description ? h("p", { class: "tool-desc" }, tool.description) : h("p", { class: "muted" }, "No description.")),
      actions),
    consoleSlot,
    h("dl", { class: "facts" },
      fact("Execution", tool.execution_mode === "async" ? "async (Celery worker)" : "sync (caller waits)"),
      fact("Timeout", `${tool.timeout_seconds} s`),
      fact("Owner", tool.owner || (tool.source === "code" ? "shared (code)" : "—")),
      type?.credential_fields?.length ? fact("Credentials", tool.credentials_set?.length ? `set: ${tool.credentials_set.join(", ")}` : "not set") : null),
    h("div", { class: "schema-grid" },
      schemaCard("Input schema", tool.input_schema, "input-schema-view"),
      schemaCard("Output schema", tool.output_schema, "output-schema-view")),
    tool.config && Object.keys(tool.config).length && tool.kind !== "code" ? configView(tool.config) : null,
  );
  const network = h("section", { class: "network-access", id: "network-access", hidden: true });
  const connection = h("section", { class: "tool-connection", id: "tool-connection", hidden: true });
  main.querySelector(".facts").after(connection, network, usedBy);
  if (tool.config?.auth?.type === "oauth2_authorization_code") showConnection(tool, connection);
  if (NETWORK_KINDS.has(tool.kind)) showNetwork(tool, network);
  showUsedBy(tool, usedBy);
  if (location.hash === "#test") toggleConsole(tool, consoleSlot, testButton);
}

// Where the tool sends requests, as the address guard judges it now: refused (with the
// reason), or reaching a private network the operator allows.
const NETWORK_KINDS = new Set(["http", "openapi", "mcp", "a2a"]);

async function showNetwork(tool, box) {
  let urls;
  try {
    ({ urls } = await api(`/api/tools/${encodeURIComponent(tool.name)}/network`));
  } catch {
    return;
  }
  const shown = urls.filter((v) => v.status !== "allowed" || v.private_network);
  if (!shown.length) return;
  fill(box, h("h3", {}, "Network access"), shown.map((v) => verdictLine(v, { withUrl: true })));
  box.hidden = false;
}

// Which agents use the tool, and under which key the model sees it.
async function showUsedBy(tool, box) {
  let agents;
  try {
    agents = listOf(await api("/api/agents/?limit=500"));
  } catch {
    box.remove();
    return;
  }
  const uses = agents.flatMap((agent) => (agent.tools || [])
    .filter((binding) => binding.tool === tool.name)
    .map((binding) => ({ agent, key: binding.key })));
  fill(box, h("h3", {}, "Used by"),
    uses.length
      ? h("ul", { class: "chips used-by-list" }, uses.map(({ agent, key }) => h("li", { class: "chip", "data-agent": agent.slug },
        h("strong", {}, agent.name), key !== tool.name ? h("span", { class: "muted" }, ` as ${key}`) : null)))
      : h("p", { class: "muted" }, "No agent uses this tool yet. ",
        h("a", { href: "/" }, "Add it to an agent"), " from the agents page."));
}

// Multi-line strings (code, templates) read better as blocks than as escaped JSON.
function configView(config) {
  const blocks = Object.entries(config).filter(([, v]) => typeof v === "string" && v.includes("\n"));
  const rest = Object.fromEntries(Object.entries(config).filter(([k]) => !blocks.some(([b]) => b === k)));
  return h("section", { class: "schema-card config-view", id: "config-view" },
    h("h3", {}, "Configuration"),
    blocks.map(([key, text]) => h("div", { class: "config-block" },
      h("div", { class: "config-key" }, key), h("pre", { class: "json code-block" }, text))),
    Object.keys(rest).length ? h("pre", { class: "json" }, formatJson(rest)) : null);
}

function toggleConsole(tool, slot, button) {
  if (state.console) {
    closeConsole();
    button.setAttribute("aria-expanded", "false");
    button.textContent = "▶ Test tool";
    history.replaceState({}, "", location.pathname + location.search);
    return;
  }
  state.console = openConsole(slot, tool);
  button.setAttribute("aria-expanded", "true");
  button.textContent = "Close console";
  history.replaceState({}, "", `${location.pathname}${location.search}#test`);
}

async function deleteTool(tool) {
  if (!window.confirm(`Delete the tool “${tool.name}”? Agents using it lose it.`)) return;
  try {
    await api(`/api/tools/${encodeURIComponent(tool.name)}/`, { method: "DELETE" });
  } catch (err) {
    window.alert(err.message);
    return;
  }
  state.tools = state.tools.filter((t) => t.name !== tool.name);
  renderFilter();
  navigate("/tools/");
}

async function start() {
  try {
    const [tools, types] = await Promise.all([api("/api/tools/?limit=1000"), api("/api/tool-types/")]);
    state.tools = listOf(tools);
    state.types = listOf(types);
  } catch (err) {
    fill(main, h("div", { class: "tools-empty error" }, `Could not load tools: ${err.message}`));
    index.replaceChildren();
    return;
  }
  renderFilter();
  await render();
  app.dataset.ready = "1";
}

start();
