// The new-agent page: create an agent from scratch, from a template (an export document
// of built-in tools), by duplicating any agent the user can see (code ones included), or
// by importing an exported agent, with a preview and new names for what clashes. Every
// path ends on the new agent's settings page.

import { planSummary, renamesFor, slugify, withIdentity } from "./lib/agent_io.js";
import { ApiError, api } from "./lib/api.js";
import { fill, h } from "./lib/dom.js";
import { mountModelPicker } from "./model_picker.js";

const config = JSON.parse(document.getElementById("new-config").textContent);
const $ = (id) => document.getElementById(id);
const url = (template, slug) => template.replace("__slug__", encodeURIComponent(slug));

let templates = [];
let clashes = []; // from the last refused import: [{kind, name, suggestion, path}]
let slugTouched = false;

const start = () => document.querySelector("input[name=start]:checked").value;

function showStart() {
  const chosen = start();
  for (const el of document.querySelectorAll("[data-start]")) el.hidden = el.dataset.start !== chosen;
  $("create").textContent = chosen === "import" ? "Import" : chosen === "duplicate" ? "Duplicate" : "Create agent";
  if (chosen === "duplicate") suggestIdentity($("duplicate-source").selectedOptions[0]?.dataset.name, "copy");
  if (chosen === "template") pickTemplate();
  clearErrors();
}

function suggestIdentity(name, suffix = "") {
  if (!name) return;
  $("field-name").value = suffix ? `${name} (${suffix})` : name;
  if (!slugTouched) $("field-slug").value = slugify($("field-name").value);
}

function clearErrors() {
  for (const id of ["error-slug", "error-model", "form-error"]) $(id).textContent = "";
}

// --- templates ----------------------------------------------------------------------------
async function loadTemplates() {
  templates = await api(config.urls.templates);
  fill($("template-list"), templates.map((t, index) => h("li", {},
    h("label", {},
      h("input", { type: "radio", name: "template", value: t.id, checked: index === 0, onchange: pickTemplate }),
      h("span", {}, h("strong", {}, t.name), h("br"), h("span", { class: "muted" }, t.description))))));
}

function chosenTemplate() {
  const id = document.querySelector("input[name=template]:checked")?.value;
  return templates.find((t) => t.id === id);
}

function pickTemplate() {
  const template = chosenTemplate();
  if (template) suggestIdentity(template.document.agents[0].name);
}

// --- import -------------------------------------------------------------------------------
function importedDocument() {
  const text = $("import-text").value.trim();
  if (!text) throw new Error("Paste an exported agent or choose a file.");
  try {
    return JSON.parse(text);
  } catch (err) {
    throw new Error(`Not valid JSON: ${err.message}`);
  }
}

function adoptImport() {
  try {
    const first = importedDocument()?.agents?.[0];
    if (first) {
      $("field-name").value = first.name || "";
      if (!slugTouched) $("field-slug").value = first.slug || "";
    }
  } catch { /* shown when the user previews or imports */ }
  clashes = [];
  renderClashes();
  $("import-plan").hidden = true;
}

function importBody({ dryRun }) {
  let doc = importedDocument();
  const slug = $("field-slug").value.trim();
  if (doc?.agents?.[0] && slug) doc = withIdentity(doc, { slug, name: $("field-name").value.trim() });
  const typed = Object.fromEntries([...$("clash-list").querySelectorAll("input")]
    .map((input) => [input.dataset.clash, input.value]));
  return { document: doc, renames: renamesFor(clashes, typed), dry_run: dryRun };
}

function renderClashes() {
  const list = $("clash-list");
  list.hidden = clashes.length === 0;
  fill(list, clashes.length ? h("li", { class: "error" }, "These names are taken: pick new ones (or keep the suggestions) and import again.") : null,
    clashes.map((clash) => h("li", {}, h("label", {}, `${clash.kind === "agent" ? "Agent" : "Tool"} ${clash.name} → `,
      h("input", { value: clash.suggestion, dataset: { clash: `${clash.kind}:${clash.name}` }, "aria-label": `New name for ${clash.name}` })))));
}

// A large import answers 202 with a job that a worker runs: follow its progress here until
// it ends, then go on with its result (what a small import answers) or its error.
async function imported(body) {
  let answer = await api(config.urls.import, { method: "POST", body });
  if (!(answer && answer.url && answer.status)) return answer;
  const status = $("import-progress");
  status.hidden = false;
  while (answer.status === "pending" || answer.status === "running") {
    status.value = answer.done;
    status.max = answer.total || 1;
    status.textContent = `${answer.done} / ${answer.total}`;
    $("import-progress-label").textContent = `Importing: ${answer.done} of ${answer.total} agents and tools`;
    await new Promise((resolve) => setTimeout(resolve, 500));
    answer = await api(answer.url);
  }
  status.hidden = true;
  $("import-progress-label").textContent = "";
  if (answer.status === "failed") throw new ApiError(answer.error_status, answer.error);
  return answer.result;
}

async function preview() {
  clearErrors();
  try {
    const plan = await imported(importBody({ dryRun: true }));
    $("import-plan").hidden = false;
    fill($("import-plan"), h("strong", {}, "Will create: "), planSummary(plan));
  } catch (err) {
    showError(err);
  }
}

// --- creating -----------------------------------------------------------------------------
async function create(event) {
  event.preventDefault();
  clearErrors();
  const slug = $("field-slug").value.trim();
  const name = $("field-name").value.trim();
  try {
    const chosen = start();
    if (chosen === "scratch") {
      await api(config.urls.agents, {
        method: "POST",
        body: { slug, name, model: $("field-model").value.trim() || undefined, description: $("field-description").value },
      });
    } else if (chosen === "duplicate") {
      await api(url(config.urls.duplicate, $("duplicate-source").value), { method: "POST", body: { slug, name } });
    } else if (chosen === "template") {
      const template = chosenTemplate();
      if (!template) throw new Error("Pick a template.");
      await api(config.urls.import, { method: "POST", body: { document: withIdentity(template.document, { slug, name }) } });
    } else {
      const plan = await imported(importBody({ dryRun: false }));
      window.location.assign(url(config.urls.edit, plan.agent));
      return;
    }
    window.location.assign(url(config.urls.edit, slug));
  } catch (err) {
    showError(err);
  }
}

function showError(err) {
  if (!(err instanceof ApiError)) {
    $("form-error").textContent = err.message;
    return;
  }
  const body = err.body || {};
  if (body.code === "name_clash" && start() === "import") {
    clashes = body.clashes;
    renderClashes();
    $("form-error").textContent = err.message;
    return;
  }
  if (body.code === "name_clash") {
    $("error-slug").textContent = `${err.message} Try ${body.clashes[0].suggestion}.`;
    return;
  }
  const fields = err.fieldErrors;
  if (fields.slug) $("error-slug").textContent = fields.slug;
  if (fields.model) $("error-model").textContent = fields.model;
  const rest = Object.entries(fields).filter(([key]) => !["slug", "model"].includes(key));
  const paths = (body.errors || []).map((e) => `${e.path}: ${e.message}`);
  $("form-error").textContent = [...rest.map(([k, v]) => `${k}: ${v}`), ...paths].join(" ") ||
    (fields.slug || fields.model ? "" : err.message);
}

// --- start --------------------------------------------------------------------------------
for (const radio of document.querySelectorAll("input[name=start]")) radio.addEventListener("change", showStart);
$("field-name").addEventListener("input", () => {
  if (!slugTouched) $("field-slug").value = slugify($("field-name").value);
});
$("field-slug").addEventListener("input", () => { slugTouched = $("field-slug").value !== ""; });
$("duplicate-source").addEventListener("change", () => suggestIdentity($("duplicate-source").selectedOptions[0]?.dataset.name, "copy"));
$("import-text").addEventListener("change", adoptImport);
$("import-file").addEventListener("change", async () => {
  const file = $("import-file").files[0];
  if (file) $("import-text").value = await file.text();
  adoptImport();
});
$("preview").addEventListener("click", preview);
$("new-form").addEventListener("submit", create);
mountModelPicker($("field-model"));
// What was typed while this module loaded had no listener yet: a name still gets its
// slug. The button stays disabled until here, so that no submit skips `create`.
if (!$("field-slug").value && $("field-name").value) $("field-slug").value = slugify($("field-name").value);
$("create").disabled = false;
await loadTemplates();
if (config.duplicate) {
  document.querySelector("input[name=start][value=duplicate]").checked = true;
  $("duplicate-source").value = config.duplicate;
}
showStart();
