// The settings page (/settings/): Settings → Web search, the search the web_search tool
// uses (/api/settings/web-search/), and a search to try it. The key goes to the server
// once; only whether one is set, and a hint of it, come back.

import { ApiError, api } from "./lib/api.js";
import { fill, h } from "./lib/dom.js";
import { safeUrl } from "./lib/widget_kinds.js";

const $ = (id) => document.getElementById(id);
const URL_API = "/api/settings/web-search/";
let providers = [];
let current = null;

function describe(data) {
  const setting = data.setting;
  if (setting) {
    const label = providers.find((p) => p.id === setting.provider)?.label || setting.provider;
    return ["Yours: ", h("strong", {}, label), setting.base_url ? [" at ", h("code", {}, setting.base_url)] : null,
      setting.model ? [" with ", h("code", {}, setting.model)] : null,
      setting.key_set ? [" · key ", h("code", { class: "key-hint" }, setting.key_hint || "set")] : null];
  }
  if (data.server) return ["None of yours: the server's (", h("strong", {}, data.server.provider), ") applies."];
  return "None configured: web_search answers an error until you add one.";
}

function showFields() {
  const provider = providers.find((p) => p.id === $("web-search-provider").value) || {};
  const form = $("web-search-form");
  $("web-search-url-field").hidden = provider.id === "native";
  $("web-search-key-field").hidden = !provider.needs_key;
  $("web-search-model-field").hidden = provider.id !== "native";
  form.base_url.placeholder = provider.needs_url ? "https://searx.example.org" : provider.default_url ? `blank: ${provider.default_url}` : "";
  const keySet = current && current.provider === provider.id && current.key_set;
  form.api_key.placeholder = keySet ? "set — leave blank to keep it" : "";
}

async function load() {
  const data = await api(URL_API);
  providers = data.providers;
  current = data.setting;
  const select = $("web-search-provider");
  if (!select.options.length) fill(select, providers.map((p) => h("option", { value: p.id }, p.label)));
  const form = $("web-search-form");
  if (current) {
    select.value = current.provider;
    form.base_url.value = current.base_url;
    form.model.value = current.model;
  }
  form.api_key.value = "";
  fill($("web-search-current"), describe(data));
  $("web-search-remove").hidden = !current;
  showFields();
}

function showError(box, err) {
  const paths = err instanceof ApiError && Array.isArray(err.body?.errors) ? err.body.errors : [];
  fill(box, paths.length ? paths.map((e) => h("div", {}, h("code", {}, e.path), ` ${e.message}`)) : err.message);
  box.hidden = false;
}

async function save(event) {
  event.preventDefault();
  const form = event.target;
  const errors = $("web-search-errors");
  errors.hidden = true;
  const provider = form.provider.value;
  const body = { provider, base_url: provider === "native" ? "" : form.base_url.value.trim() };
  if (provider === "native") body.model = form.model.value.trim();
  const key = form.api_key.value.trim();
  if (key) body.api_key = key;
  try {
    await api(URL_API, { method: "PUT", body });
    await load();
  } catch (err) {
    showError(errors, err);
  }
}

function resultItem(result) {
  const href = safeUrl(result.url);
  return h("li", { class: "search-result" },
    href ? h("a", { href, target: "_blank", rel: "noopener noreferrer nofollow" }, result.title) : h("span", {}, result.title),
    h("div", { class: "muted small" }, result.url),
    result.snippet ? h("div", {}, result.snippet) : null);
}

async function trySearch(event) {
  event.preventDefault();
  const out = $("web-search-results");
  fill(out, h("p", { class: "muted" }, "Searching…"));
  try {
    const body = await api(`${URL_API.slice(0, -1)}/test`, { method: "POST", body: { query: event.target.query.value } });
    fill(out, body.results.length ? h("ol", { class: "search-results" }, body.results.map(resultItem)) : h("p", { class: "muted" }, "No results."));
  } catch (err) {
    const box = h("div", { class: "error-box" });
    showError(box, err);
    fill(out, box);
  }
}

$("web-search-provider").addEventListener("change", showFields);
$("web-search-form").addEventListener("submit", save);
$("web-search-try").addEventListener("submit", trySearch);
$("web-search-remove").addEventListener("click", async () => {
  await api(URL_API, { method: "DELETE" });
  $("web-search-form").reset();
  await load();
});
load();
