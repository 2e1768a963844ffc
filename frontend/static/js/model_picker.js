// The model picker: turns a text <input> holding a model string into a searchable list of
// the models litellm knows (GET /api/models?search=), with each one's provider, context
// window and price, the providers the user can call marked as such. Free text stays
// allowed: the input keeps whatever is typed (a model the list does not know, an
// OpenAI-compatible server's <name>/<model>).
//
//   import { mountModelPicker } from "/static/js/model_picker.js";
//   mountModelPicker(document.getElementById("field-model"));
//
// Picking a model sets the input's value and fires "input" and "change" on it, so a form
// that listens to the input sees the pick like typing.

import { api } from "./lib/api.js";
import { fill, h } from "./lib/dom.js";

const DEBOUNCE_MS = 150;

export function formatTokens(count) {
  if (count == null) return "";
  if (count >= 1_000_000) return `${+(count / 1_000_000).toFixed(1)}M tokens`;
  if (count >= 1000) return `${Math.round(count / 1000)}k tokens`;
  return `${count} tokens`;
}

export function formatPrice(model) {
  const { input_cost_per_million: input, output_cost_per_million: output } = model;
  if (input == null && output == null) return "";
  const dollars = (value) => (value == null ? "?" : `$${+value.toFixed(4)}`);
  return `${dollars(input)} / ${dollars(output)} per 1M in/out`;
}

function option(model, index, onPick) {
  const facts = [formatTokens(model.context_window), formatPrice(model)].filter(Boolean);
  return h(
    "li",
    {
      role: "option",
      id: `model-option-${index}`,
      class: `model-option${model.usable ? "" : " model-option-unusable"}`,
      dataset: { model: model.model },
      onmousedown: (event) => {
        event.preventDefault(); // keep the focus in the input
        onPick(model.model);
      },
    },
    h("span", { class: "model-name" }, model.model),
    h("span", { class: "muted small" }, model.server ? "your server: type its model" : facts.join(" · ")),
    model.usable ? null : h("span", { class: "badge" }, "no key"),
  );
}

// The user's OpenAI-compatible servers whose name matches what is typed, as "<name>/"
// entries: the model after the slash is the server's to know.
export function serverEntries(providers, text) {
  const compatible = (providers || []).find((p) => p.id === "openai_compatible");
  const word = text.split("/")[0].toLowerCase();
  return (compatible?.servers || [])
    .filter((name) => !word || name.includes(word))
    .map((name) => ({ model: `${name}/`, usable: true, server: true }));
}

export function mountModelPicker(input, { limit = 30 } = {}) {
  const list = h("ul", { class: "model-picker-list", role: "listbox", hidden: true });
  const status = h("p", { class: "muted small model-picker-status", "aria-live": "polite" });
  input.setAttribute("role", "combobox");
  input.setAttribute("aria-autocomplete", "list");
  input.setAttribute("autocomplete", "off");
  input.after(list, status);
  let timer = null;
  let controller = null;
  let active = -1;

  const pick = (value) => {
    input.value = value;
    list.hidden = true;
    input.dispatchEvent(new Event("input", { bubbles: true }));
    input.dispatchEvent(new Event("change", { bubbles: true }));
  };

  const highlight = (index) => {
    const items = [...list.children];
    if (!items.length) return;
    active = (index + items.length) % items.length;
    items.forEach((item, i) => item.classList.toggle("active", i === active));
    input.setAttribute("aria-activedescendant", items[active].id);
  };

  // `aria-busy` on the list: what it shows may not match the text yet (a search waits
  // for the typing to pause, or for the server).
  const busy = (value) => list.setAttribute("aria-busy", String(value));

  async function search() {
    controller?.abort();
    controller = new AbortController();
    busy(true);
    const query = new URLSearchParams({ search: input.value.trim(), limit: String(limit) });
    try {
      const data = await api(`/api/models?${query}`, { signal: controller.signal });
      const models = [...serverEntries(data.providers, input.value.trim()), ...data.results];
      // The model highlighted by the keyboard stays highlighted when it is still listed.
      const kept = active >= 0 ? list.children[active]?.dataset.model : undefined;
      active = -1;
      input.removeAttribute("aria-activedescendant");
      fill(list, models.map((model, i) => option(model, i, pick)));
      const again = models.findIndex((model) => model.model === kept);
      if (again >= 0) highlight(again);
      busy(false);
      // An answer that arrives after the focus left stays closed (blur hid the list).
      list.hidden = models.length === 0 || document.activeElement !== input;
      status.textContent = models.length
        ? ""
        : "No model in litellm's list matches: the text is used as it is.";
    } catch (err) {
      if (err.name === "AbortError") return; // a newer search is on its way
      status.textContent = err.message;
      busy(false);
    }
  }

  input.addEventListener("input", (event) => {
    if (!event.isTrusted) return; // a pick, not typing
    clearTimeout(timer);
    controller?.abort(); // an answer for the text before this one must not land
    busy(true);
    timer = setTimeout(search, DEBOUNCE_MS);
  });
  input.addEventListener("focus", search);
  input.addEventListener("blur", () => {
    list.hidden = true;
  });
  // Focused before this module ran (a page still loading its scripts): no focus event
  // will come, so search now for what is already there.
  if (document.activeElement === input) search();
  input.addEventListener("keydown", (event) => {
    if (list.hidden) return;
    if (event.key === "ArrowDown" || event.key === "ArrowUp") {
      event.preventDefault();
      highlight(active + (event.key === "ArrowDown" ? 1 : -1));
    } else if (event.key === "Enter" && active >= 0) {
      event.preventDefault();
      pick(list.children[active].dataset.model);
    } else if (event.key === "Escape") {
      list.hidden = true;
    }
  });
  return { search, pick };
}
