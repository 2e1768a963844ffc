// The connector catalogue (/connectors/): pick a connector, give its instance URL, an
// authentication preset with its credentials and its settings, pick operations, and add
// them as your tools. Talks to /api/connectors/.
import { api, ApiError } from "./lib/api.js";
import { h } from "./lib/dom.js";
import { accountLine } from "./lib/tool_connection.js";

const $ = (sel, root = document) => root.querySelector(sel);
const $$ = (sel, root = document) => [...root.querySelectorAll(sel)];

const toolLink = (name) => h("a", { class: "chip tool-chip", href: `/tools/${encodeURIComponent(name)}/` }, name);
// The connector's initial on its colour (set through CSSOM: the CSP refuses style attributes).
function monogram(c) {
  const mark = h("span", { class: "monogram", "aria-hidden": "true" }, c.name[0]);
  mark.style.backgroundColor = c.color;
  return mark;
}
const methodBadge = (method) => h("span", { class: `method method-${method.toLowerCase()}` }, method);

async function loadCatalogue() {
  const connectors = await api("/api/connectors/");
  $("#connector-cards").replaceChildren(...connectors.map((c) => h("li", {},
    h("button", { type: "button", class: "connector-card", "data-slug": c.slug, "aria-pressed": "false", onclick: () => select(c.slug) },
      monogram(c),
      h("span", {}, h("strong", {}, c.name), h("p", {}, c.description))))));
  const wanted = decodeURIComponent(location.hash.slice(1));
  if (connectors.some((c) => c.slug === wanted)) await select(wanted);
}

async function select(slug) {
  for (const card of $$(".connector-card")) card.setAttribute("aria-pressed", String(card.dataset.slug === slug));
  history.replaceState(null, "", `#${slug}`);
  const connector = await api(`/api/connectors/${encodeURIComponent(slug)}/`);
  renderDetail(connector);
}

function credentialFields(preset) {
  return preset.fields.map((f) => h("label", {}, `${f.label}${f.required ? "" : " (optional)"}`,
    h("input", { type: f.name === "username" ? "text" : "password", autocomplete: "off", "data-cred": f.name, "data-path": `$.credentials.${f.name}` })));
}

function renderDetail(connector) {
  const box = $("#connector-detail");
  $("#connector-empty").hidden = true;
  const available = connector.auth.filter((p) => p.available);
  const waiting = connector.auth.filter((p) => !p.available);
  const creds = h("div", { class: "span connect-form", id: "connect-creds" });
  const presetHelp = h("p", { class: "muted small span", id: "preset-help" });
  const showPreset = (preset) => {
    creds.replaceChildren(...credentialFields(preset));
    presetHelp.textContent = preset.help || "";
    // Settings that belong to some sign-ins only (e.g. the tenant of Microsoft's OAuth).
    for (const label of $$("[data-setting-presets]", box)) {
      const presets = label.dataset.settingPresets.split(" ").filter(Boolean);
      label.hidden = presets.length > 0 && !presets.includes(preset.id);
    }
  };
  const instance = connector.instance;
  const rows = connector.operations.map((op) => h("tr", { "data-key": op.key },
    h("td", {}, h("input", { type: "checkbox", class: "op-pick", checked: true, "aria-label": `Pick ${op.key}` })),
    h("td", { class: "nowrap" }, methodBadge(op.method), " ", h("code", {}, op.path)),
    h("td", {}, h("input", { class: "op-name code", value: op.name, "aria-label": `Tool name for ${op.key}` }),
      op.name_taken ? h("div", { class: "warn small" }, "name taken: change it") : null),
    h("td", { class: "op-desc" }, h("details", {}, h("summary", {}, op.summary),
      h("p", { class: "small muted op-doc" }, op.details)))));
  const add = h("button", { class: "primary", id: "connect-add", type: "submit" }, "Add tools");
  const form = h("form", { id: "connect-form", novalidate: true },
    h("div", { class: "connect-form" },
      h("label", { class: "span" }, `${instance.label}${instance.required ? "" : " (optional)"}`,
        h("input", { type: "url", name: "instance_url", id: "instance-url", placeholder: instance.placeholder, "data-path": "$.instance_url", "data-url-check": true }),
        h("span", { class: "muted small" }, instance.help || "")),
      h("fieldset", { class: "span cred-box" },
        h("legend", {}, "Sign-in (stored encrypted on each tool, never shown again)"),
        h("div", { class: "presets", role: "radiogroup", "aria-label": "Authentication" },
          available.map((p, i) => h("label", {}, h("input", { type: "radio", name: "auth", value: p.id, checked: i === 0, "data-path": "$.auth", onchange: () => showPreset(p) }), p.label)),
          waiting.map((p) => h("span", { class: "preset-waits", "data-waiting": p.id }, `${p.label}: not available yet in this studio`))),
        presetHelp, creds),
      connector.settings.map((s) => h("label", { "data-setting-presets": s.presets.join(" ") }, `${s.label}${s.required ? "" : " (optional)"}`,
        h("input", { type: "text", value: s.default, "data-setting": s.id, "data-path": `$.settings.${s.id}` }),
        h("span", { class: "muted small" }, s.help || "")))),
    h("table", { class: "ops" },
      h("thead", {}, h("tr", {}, h("th", {}, ""), h("th", {}, "Operation"), h("th", {}, "Tool name"), h("th", {}, "Summary"))),
      h("tbody", {}, rows)),
    h("div", { class: "actions" }, add, h("span", { class: "muted", id: "pick-count" })),
    h("div", { id: "connect-errors", class: "error-box", hidden: true }),
    h("div", { id: "connect-result" }));
  box.replaceChildren(h("div", { class: "preview-head" }, h("h2", { id: "connector-title" }, monogram(connector), " ", connector.name)),
    h("p", { class: "muted" }, connector.description), h("div", { id: "connected" }), form);
  showConnected(connector).catch(() => {});
  box.hidden = false;
  if (available.length) showPreset(available[0]);
  const count = () => {
    const n = $$(".op-pick:checked", form).length;
    $("#pick-count").textContent = `${n} of ${rows.length} operations`;
    add.textContent = n === 1 ? "Add 1 tool" : `Add ${n} tools`;
  };
  form.addEventListener("change", count);
  count();
  form.addEventListener("submit", (event) => { event.preventDefault(); connect(connector, form, add); });
}

// The user's sources made from this connector, with their tools; a source whose sign-in is
// the user's own account (OAuth authorization code) shows whether it is connected and a
// Connect link that comes back here. One connection serves every tool of the source.
async function showConnected(connector) {
  const sources = (await api("/api/sources/?kind=openapi")).filter((s) => s.config.connector === connector.slug);
  const items = await Promise.all(sources.map(async (s) => h("li", { "data-source": s.id }, h("strong", {}, s.name), " ",
    h("span", { class: "chips" }, s.tools.map((t) => toolLink(t.name))), await connectorAccount(connector, s))));
  $("#connected").replaceChildren(...(sources.length ? [h("h3", {}, `Your ${connector.name} tools`), h("ul", { class: "connected-list" }, items)] : []));
}

async function connectorAccount(connector, source) {
  const tool = source.tools[0];
  if (!tool) return null;
  const status = await api(`/api/tools/${encodeURIComponent(tool.name)}/connection`).catch(() => null);
  if (!status || !status.connectable) return null;
  return accountLine(status, {
    next: `/connectors/#${connector.slug}`,
    sourceId: source.id,
    notConnected: "Not connected: these tools call the API as you.",
  });
}

function clearErrors(form) {
  $("#connect-errors").hidden = true;
  for (const el of $$(".has-error", form)) el.classList.remove("has-error");
  for (const el of $$(".field-error, tr.row-error", form)) el.classList.contains("field-error") ? el.remove() : el.classList.remove("row-error");
}

function showErrors(form, err, picks) {
  const box = $("#connect-errors");
  const list = (err instanceof ApiError && err.body && err.body.errors) || [];
  box.hidden = false;
  box.replaceChildren(h("p", { class: "error-title" }, err.message),
    list.length ? h("ul", { class: "error-list" }, list.map((e) => h("li", {}, h("code", {}, e.path), " ", e.message))) : null);
  for (const e of list) {
    const pick = /^\$\.picks\[(\d+)\]/.exec(e.path);
    if (pick && picks[Number(pick[1])]) {
      $(`tr[data-key="${CSS.escape(picks[Number(pick[1])].key)}"]`, form)?.classList.add("row-error");
      continue;
    }
    const field = $(`[data-path="${CSS.escape(e.path)}"]`, form);
    if (!field) continue;
    field.classList.add("has-error");
    field.closest("label")?.append(h("span", { class: "field-error", "data-error-for": e.path }, e.message));
  }
}

async function connect(connector, form, button) {
  clearErrors(form);
  const picks = $$("tbody tr", form).filter((tr) => $(".op-pick", tr).checked)
    .map((tr) => ({ key: tr.dataset.key, name: $(".op-name", tr).value.trim() }));
  const credentials = Object.fromEntries($$("[data-cred]", form).map((i) => [i.dataset.cred, i.value]));
  const settings = Object.fromEntries($$("[data-setting]", form).filter((i) => !i.closest("label").hidden)
    .map((i) => [i.dataset.setting, i.value]));
  const body = {
    instance_url: $("#instance-url").value.trim(),
    auth: ($("input[name=auth]:checked", form) || {}).value || "",
    credentials, settings, picks,
  };
  button.disabled = true;
  try {
    const source = await api(`/api/connectors/${encodeURIComponent(connector.slug)}/add`, { method: "POST", body });
    for (const input of $$("[data-cred]", form)) input.value = "";
    $("#connect-result").replaceChildren(h("div", { class: "success" },
      h("p", {}, `Connected "${source.name}": ${source.tools.length} tool(s). Open one to test it in the console, or bind it to an agent from the home page:`),
      h("div", { class: "chips" }, source.tools.map((t) => toolLink(t.name)))));
    await showConnected(connector);
  } catch (err) {
    showErrors(form, err, picks);
  } finally {
    button.disabled = false;
  }
}

loadCatalogue().catch((err) => {
  $("#connector-cards").replaceChildren(h("li", { class: "error" }, err.message));
}).finally(() => { $("#connectors-app").dataset.ready = "1"; });
