// Create / edit a studio tool: type picker, snake_case name enforced as it is typed, input
// and output JSON Schema editors checked live, the type's config form generated from its
// config_schema, and advanced settings (execution mode, timeout, write-only credentials).
// The server's field errors are shown next to their fields.

import { api, ApiError, flattenMessages, listOf } from "./lib/api.js";
import { mountSchemaForm } from "./lib/schema_form.js";
import { parseJson, schemaProblems, TOOL_NAME_RE, toSnakeCase } from "./lib/schema_json.js";
import { fill, h } from "./lib/dom.js";
import { formatJson } from "./lib/format.js";
import { kindLabel, orderSchema } from "./lib/tool_display.js";
import { watchUrl } from "./lib/url_check.js";

// Credential fields holding PEM text (tools_app/auth): edited in a textarea.
const PEM_FIELDS = new Set(["private_key", "client_cert", "client_key", "ca_bundle"]);
const NAME_HINT = "snake_case: lowercase letters, digits and _, starting with a letter. The model sees this name.";
const DEFAULT_INPUT_SCHEMA = {
  type: "object",
  properties: { query: { type: "string", description: "What to look up." } },
  required: ["query"],
};

// A first config that runs with DEFAULT_INPUT_SCHEMA, so a new tool can be tried at once.
const STARTERS = {
  python: { code: '# `input` is the validated input; return JSON; print() goes to the logs.\nreturn {"answer": input["query"].upper()}' },
};

// Turn whatever was typed into a tool name; say what was refused.
export function cleanToolName(text) {
  const snake = toSnakeCase(text);
  const refused = [...new Set(snake.replace(/[a-z0-9_]/g, ""))].join("");
  return { value: snake.replace(/[^a-z0-9_]/g, ""), refused };
}

function field(name, label, control, help) {
  return h("div", { class: "form-field", "data-field": name },
    h("label", { class: "form-label", for: control.id }, label),
    control,
    help ? h("div", { class: "form-help", id: `${control.id}-help` }, help) : null);
}

function showFieldError(form, name, message) {
  const wrapper = form.querySelector(`.form-field[data-field="${name}"]`);
  if (!wrapper) return false;
  wrapper.classList.add("has-error");
  wrapper.append(h("div", { class: "field-error", "data-error-for": name, role: "alert" }, message));
  return true;
}

function clearErrors(form) {
  form.querySelectorAll(".field-error").forEach((el) => el.remove());
  form.querySelectorAll(".has-error").forEach((el) => el.classList.remove("has-error"));
  form.querySelector(".form-banner").hidden = true;
}

function schemaEditor(id, { initial, optional, mustBeObject }) {
  const area = h("textarea", { id, class: "code schema-editor", rows: 10, spellcheck: "false",
    placeholder: optional ? "Leave empty to accept any output" : "" });
  area.value = initial === null || initial === undefined ? "" : formatJson(orderSchema(initial));
  const status = h("div", { class: "schema-status", "aria-live": "polite" });
  const format = h("button", { type: "button", class: "link-button", onclick: () => {
    const parsed = parseJson(area.value);
    if (parsed.ok) { area.value = formatJson(parsed.value); check(); }
  } }, "Format");
  function check() {
    if (optional && !area.value.trim()) {
      status.className = "schema-status is-muted";
      status.textContent = "No output schema: any output is accepted.";
      return { ok: true, value: null };
    }
    const parsed = parseJson(area.value);
    if (!parsed.ok) {
      status.className = "schema-status is-error";
      status.textContent = `✗ ${parsed.message}`;
      area.setAttribute("aria-invalid", "true");
      return parsed;
    }
    const problems = schemaProblems(parsed.value);
    if (mustBeObject && parsed.value?.type !== "object") {
      problems.unshift({ path: "$.type", message: "The input schema must describe an object (\"type\": \"object\")." });
    }
    if (problems.length) {
      status.className = "schema-status is-error";
      status.textContent = problems.map((p) => `✗ ${p.path}: ${p.message}`).join("\n");
      area.setAttribute("aria-invalid", "true");
      return { ok: false, value: parsed.value, message: problems[0].message };
    }
    const count = Object.keys(parsed.value.properties || {}).length;
    status.className = "schema-status is-ok";
    status.textContent = `✓ Valid JSON Schema${parsed.value.type === "object" ? ` · ${count} propert${count === 1 ? "y" : "ies"}` : ""}`;
    area.removeAttribute("aria-invalid");
    return parsed;
  }
  area.addEventListener("input", check);
  area.addEventListener("keydown", (event) => {
    // Tab indents inside the editor instead of leaving it.
    if (event.key === "Tab" && !event.shiftKey) {
      event.preventDefault();
      area.setRangeText("  ", area.selectionStart, area.selectionEnd, "end");
      check();
    }
  });
  check();
  return { area, status, format, check };
}

// "Agent as tool" names an agent by slug: offer the agents the user can see.
async function suggestAgents(input) {
  if (!input) return;
  let agents = [];
  try {
    agents = listOf(await api("/api/agents/?limit=500"));
  } catch {
    return; // suggestions only: the field still takes any slug
  }
  const list = h("datalist", { id: "agent-slugs" },
    agents.map((agent) => h("option", { value: agent.slug }, agent.name)));
  input.setAttribute("list", list.id);
  input.after(list);
}

export function renderToolForm(main, { types, kind, tool = null, onSaved, onCancel }) {
  const creating = !tool;
  const creatable = types.filter((t) => t.creatable);
  let currentType = tool ? types.find((t) => t.kind === tool.kind) : creatable.find((t) => t.kind === kind) || creatable[0];
  let configForm = null;

  const banner = h("div", { class: "form-banner error", role: "alert", hidden: true });

  // --- type picker ---------------------------------------------------------------------
  const picker = h("div", { class: "type-picker", role: "radiogroup", "aria-label": "Tool type" });
  function renderPicker() {
    fill(picker, ...creatable.map((type) => h("label", {
      class: `type-option${type.kind === currentType?.kind ? " is-selected" : ""}`, "data-kind": type.kind,
    },
    h("input", { type: "radio", name: "kind", value: type.kind, checked: type.kind === currentType?.kind,
      onchange: () => { currentType = type; renderPicker(); renderConfig(); renderCredentials(); } }),
    h("span", { class: `kind kind-${type.kind}` }, kindLabel(type.kind)),
    h("span", { class: "type-option-label" }, type.label))));
  }

  // --- name and description -------------------------------------------------------------
  const name = h("input", { id: "tool-name", name: "name", autocomplete: "off", spellcheck: "false",
    placeholder: "get_weather", maxlength: 64, "aria-describedby": "tool-name-help" });
  name.value = tool?.name || "";
  const nameField = field("name", "Name", name, NAME_HINT);
  const nameHelp = nameField.querySelector(".form-help");
  name.addEventListener("input", () => {
    const caret = name.selectionStart ?? name.value.length;
    const cleaned = cleanToolName(name.value);
    const before = cleanToolName(name.value.slice(0, caret)).value.length;
    if (cleaned.value !== name.value) {
      name.value = cleaned.value;
      name.setSelectionRange(before, before);
    }
    if (cleaned.refused) {
      nameHelp.className = "form-help is-warning";
      nameHelp.textContent = `“${cleaned.refused}” is not allowed in a tool name: use lowercase letters, digits and _.`;
    } else if (name.value && !/^[a-z]/.test(name.value)) {
      nameHelp.className = "form-help is-warning";
      nameHelp.textContent = "A tool name must start with a letter.";
    } else {
      nameHelp.className = "form-help";
      nameHelp.textContent = NAME_HINT;
    }
  });

  const description = h("textarea", { id: "tool-description", name: "description", rows: 3,
    placeholder: "What the tool does and when the model should use it." });
  description.value = tool?.description || "";

  // --- schemas ---------------------------------------------------------------------------
  const inputSchema = schemaEditor("tool-input-schema", {
    initial: tool ? tool.input_schema : DEFAULT_INPUT_SCHEMA, mustBeObject: true });
  const outputSchema = schemaEditor("tool-output-schema", { initial: tool?.output_schema, optional: true });
  const schemaField = (fieldName, label, editor) => {
    const wrapper = field(fieldName, label, editor.area);
    wrapper.querySelector(".form-label").append(editor.format);
    wrapper.append(editor.status);
    return wrapper;
  };

  // --- type config ----------------------------------------------------------------------
  const configBox = h("div", { class: "config-form", id: "tool-config" });
  const configSection = h("section", { class: "form-section form-field", "data-field": "config" },
    h("h3", {}, "Configuration"), configBox);
  function renderConfig() {
    configForm?.destroy();
    configForm = null;
    const schema = currentType?.config_schema;
    if (!schema || !Object.keys(schema.properties || {}).length) {
      fill(configBox, h("p", { class: "muted" }, "This type needs no configuration."));
      return;
    }
    configForm = mountSchemaForm(configBox, schema);
    if (tool && tool.kind === currentType.kind) configForm.setValue(tool.config || {});
    else if (STARTERS[currentType.kind]) configForm.setValue(STARTERS[currentType.kind]);
    if (currentType.kind === "agent") suggestAgents(configBox.querySelector("input[name='$.agent']"));
    // The address guard's verdict under the URL: a refused URL can be saved, but says so.
    if (currentType.kind === "http") watchUrl(configBox.querySelector("input[name='$.url']"));
  }

  // --- advanced --------------------------------------------------------------------------
  const modeRadios = ["sync", "async"].map((mode) => h("label", { class: "radio" },
    h("input", { type: "radio", name: "execution_mode", value: mode,
      checked: (tool?.execution_mode || "sync") === mode }),
    mode === "sync" ? "Sync — the caller waits for the result" : "Async — a Celery worker runs it; the result arrives later"));
  const modeField = h("div", { class: "form-field", "data-field": "execution_mode" },
    h("span", { class: "form-label" }, "Execution mode"), ...modeRadios);
  const timeout = h("input", { id: "tool-timeout", name: "timeout_seconds", type: "number", min: "0.1",
    max: "3600", step: "any" });
  timeout.value = String(tool?.timeout_seconds ?? 30);
  const credentialsBox = h("div", { class: "form-field", "data-field": "credentials" });
  // Secrets, field by field: a stored one shows "set" and is replaced only when typed
  // over (credentials_update); PEM material (keys, certificates, CA bundles) in a textarea.
  function renderCredentials() {
    const fields = currentType?.credential_fields || [];
    if (!fields.length) { credentialsBox.replaceChildren(); return; }
    const stored = tool?.kind === currentType.kind ? new Set(tool?.credentials_set || []) : new Set();
    fill(credentialsBox,
      h("span", { class: "form-label" }, "Credentials ",
        stored.size ? h("span", { class: "badge badge-set", id: "credentials-set" }, "set") : null),
      ...fields.map((credential) => h("label", { class: "credential" },
        h("span", {}, credential, stored.has(credential) ? h("span", { class: "badge badge-set", "data-set": credential }, "set") : null),
        h(PEM_FIELDS.has(credential) ? "textarea" : "input", {
          ...(PEM_FIELDS.has(credential) ? { rows: 3, spellcheck: "false" } : { type: "password", autocomplete: "new-password" }),
          name: `credential-${credential}`, "data-credential": credential,
          placeholder: stored.has(credential) ? "set — type a new value to replace it"
            : PEM_FIELDS.has(credential) ? "not set (PEM: -----BEGIN ...)" : "not set" }))),
      h("div", { class: "form-help" },
        "Stored encrypted; never shown again after saving and never passed to Python code. ",
        "Which fields an auth type reads: docs/tools.md (Authentication). ",
        stored.size ? "Typing a value replaces that field only. " : null,
        stored.size ? h("label", { class: "clear-credentials" },
          h("input", { type: "checkbox", id: "clear-credentials", name: "clear_credentials" }), "Clear the stored credentials") : null));
  }
  const advanced = h("details", { class: "form-section advanced", id: "advanced-settings", open: tool?.execution_mode === "async" || undefined },
    h("summary", {}, "Advanced settings"), modeField,
    field("timeout_seconds", "Timeout (seconds)", timeout), credentialsBox);

  // --- submit ----------------------------------------------------------------------------
  const submit = h("button", { type: "submit", class: "primary", id: "save-tool" }, creating ? "Create tool" : "Save changes");
  const form = h("form", { class: "tool-form", id: "tool-form", novalidate: true },
    h("header", { class: "form-head" },
      h("h2", {}, creating ? "Create tool" : `Edit ${tool.name}`),
      h("button", { type: "button", class: "secondary", onclick: onCancel }, "Cancel")),
    banner,
    creating ? h("section", { class: "form-section form-field", "data-field": "kind" }, h("h3", {}, "Type"), picker) : null,
    h("section", { class: "form-section" }, nameField, field("description", "Description", description)),
    h("section", { class: "form-section schema-pair" },
      schemaField("input_schema", "Input schema", inputSchema),
      schemaField("output_schema", "Output schema (optional)", outputSchema)),
    configSection,
    advanced,
    h("footer", { class: "form-foot" }, submit));

  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    clearErrors(form);
    configForm?.clearHighlights();
    const payload = collect();
    if (!payload) return;
    submit.disabled = true;
    try {
      const saved = creating
        ? await api("/api/tools/", { method: "POST", body: payload })
        : await api(`/api/tools/${encodeURIComponent(tool.name)}/`, { method: "PATCH", body: payload });
      onSaved(saved, { created: creating ? true : null, oldName: tool?.name });
    } catch (err) {
      showServerErrors(err);
    } finally {
      submit.disabled = false;
    }
  });

  function collect() {
    let ok = true;
    if (!TOOL_NAME_RE.test(name.value)) {
      showFieldError(form, "name", name.value ? "A tool name must start with a letter." : "Give the tool a name.");
      ok = false;
    }
    const input = inputSchema.check();
    const output = outputSchema.check();
    if (!input.ok) { showFieldError(form, "input_schema", "Fix the input schema first."); ok = false; }
    if (!output.ok) { showFieldError(form, "output_schema", "Fix the output schema first."); ok = false; }
    if (!ok) {
      form.querySelector(".has-error input, .has-error textarea")?.focus();
      return null;
    }
    const payload = {
      name: name.value,
      description: description.value,
      kind: currentType?.kind,
      input_schema: input.value,
      output_schema: output.value,
      config: configForm ? configForm.getValue() : {},
      execution_mode: form.querySelector("input[name=execution_mode]:checked")?.value || "sync",
      timeout_seconds: timeout.value === "" ? undefined : Number(timeout.value),
    };
    if (!creating) delete payload.kind;
    const credentials = {};
    for (const input of form.querySelectorAll("[data-credential]")) {
      if (input.value) credentials[input.dataset.credential] = input.value;
    }
    if (form.querySelector("#clear-credentials")?.checked) payload.credentials = credentials;
    else if (Object.keys(credentials).length) payload[creating ? "credentials" : "credentials_update"] = credentials;
    return payload;
  }

  function showServerErrors(err) {
    if (!(err instanceof ApiError) || err.status !== 400) {
      banner.hidden = false;
      banner.textContent = err.message;
      return;
    }
    const unplaced = [];
    for (const [key, value] of Object.entries(err.fieldErrors)) {
      if (key === "config" && placeConfigErrors(err.body.config)) continue;
      if ((key === "credentials" || key === "credentials_update") && showFieldError(form, "credentials", flattenMessages(value))) continue;
      if (!showFieldError(form, key, flattenMessages(value))) unplaced.push(`${key}: ${flattenMessages(value)}`);
    }
    if (err.body?.detail) unplaced.unshift(String(err.body.detail));
    if (unplaced.length) {
      banner.hidden = false;
      banner.textContent = unplaced.join(" ");
    }
    if (form.querySelector(".has-error [data-field=timeout_seconds], [data-field=execution_mode].has-error, [data-field=credentials].has-error")) {
      advanced.open = true;
    }
    form.querySelector(".has-error")?.scrollIntoView({ block: "center", behavior: "smooth" });
  }

  // "config.url: message" -> the config form's field at $.url; the rest under the section.
  function placeConfigErrors(messages) {
    const list = Array.isArray(messages) ? messages : [flattenMessages(messages)];
    for (const message of list) {
      const match = /^config((?:\.[^\s:.[\]]+|\[\d+\])*): (.*)$/s.exec(String(message));
      const placed = match && configForm && match[1] ? configForm.highlight(`$${match[1]}`, match[2]) : null;
      if (!placed) showFieldError(form, "config", String(message));
      else configSection.classList.add("has-error");
    }
    return true;
  }

  renderPicker();
  renderConfig();
  renderCredentials();
  fill(main, form);
  (creating ? name : description).focus();
}
