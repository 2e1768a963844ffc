// The providers page (/providers/): the user's credentials and the site-wide ones, a form
// to add one, "Test" (a one-token call, the provider's answer or error shown in place), and
// the model picker over litellm's list. Keys go to the server once; only hints come back.

import { ApiError, api } from "./lib/api.js";
import { fill, h } from "./lib/dom.js";
import { mountModelPicker } from "./model_picker.js";

const $ = (id) => document.getElementById(id);

async function testCredential(credential, modelInput, result) {
  fill(result, "Testing…");
  result.className = "provider-test-result muted";
  try {
    const body = await api(`/api/providers/${credential.id}/test`, {
      method: "POST",
      body: { model: modelInput.value.trim() },
    });
    result.className = `provider-test-result ${body.ok ? "ok" : "failed"}`;
    fill(result, body.ok ? `${body.model} answered: “${body.answer}”` : body.error);
  } catch (err) {
    result.className = "provider-test-result failed";
    fill(result, err.message);
  }
}

function card(credential, providers, reload) {
  const provider = providers.find((p) => p.id === credential.provider) || {};
  const modelInput = h("input", {
    class: "provider-test-model",
    placeholder: provider.test_model || "model to ask",
    "aria-label": "Model to test with",
  });
  const result = h("span", { class: "provider-test-result", "aria-live": "polite" });
  const remove = async () => {
    if (!window.confirm(`Delete the credential ${credential.name}?`)) return;
    await api(`/api/providers/${credential.id}/`, { method: "DELETE" });
    reload();
  };
  return h(
    "li",
    { class: "provider-card", dataset: { name: credential.name } },
    h(
      "div",
      { class: "provider-card-head" },
      h("strong", {}, credential.name),
      h("span", { class: "muted" }, credential.provider_label),
      credential.site ? h("span", { class: "badge" }, "site-wide") : null,
      credential.key_hint ? h("code", { class: "key-hint" }, credential.key_hint) : null,
      credential.api_base ? h("code", { class: "muted" }, credential.api_base) : null,
    ),
    h(
      "div",
      { class: "provider-test" },
      modelInput,
      h(
        "button",
        { type: "button", class: "secondary", onclick: () => testCredential(credential, modelInput, result) },
        "Test connection",
      ),
      credential.editable
        ? h("button", { type: "button", class: "secondary danger", onclick: remove }, "Delete")
        : null,
      result,
    ),
  );
}

async function load() {
  const data = await api("/api/providers/");
  const select = $("credential-provider");
  if (!select.options.length) {
    fill(select, data.providers.map((p) => h("option", { value: p.id }, p.label)));
  }
  fill(
    $("credential-list"),
    data.results.length
      ? data.results.map((c) => card(c, data.providers, load))
      : h("li", { class: "muted" }, "No provider configured yet."),
  );
}

async function save(event) {
  event.preventDefault();
  const form = event.target;
  const errors = $("credential-errors");
  errors.hidden = true;
  const body = {
    provider: form.provider.value,
    name: form.name.value.trim(),
    api_key: form.api_key.value.trim(),
    api_base: form.api_base.value.trim(),
    site: Boolean(form.site?.checked),
  };
  try {
    await api("/api/providers/", { method: "POST", body });
    form.reset();
    await load();
  } catch (err) {
    const fields = err instanceof ApiError ? Object.values(err.fieldErrors) : [];
    fill(errors, [err.message, ...fields].filter(Boolean).join(" "));
    errors.hidden = false;
  }
}

$("credential-form").addEventListener("submit", save);
mountModelPicker($("model-search"));
load();
