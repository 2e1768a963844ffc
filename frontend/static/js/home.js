// The home page's agent cards: hover an agent, "Add tool", pick a tool, choose the key the
// model will see, and the chip appears at once; studio bindings get a remove button. Only on
// agents the user may change the tools of (a code agent's editor policy may keep them in code).

import { api, ApiError, flattenMessages, listOf } from "./lib/api.js";
import { fill, h } from "./lib/dom.js";
import { kindLabel } from "./lib/tool_display.js";

const KEY_RE = /^[a-zA-Z0-9_-]{1,64}$/;
const KEY_HINT = "The tool name the model sees: 1–64 letters, digits, _ or -.";

// The card styles live with the tool panel's (tools.css); load them once for this page.
if (!document.querySelector("link[data-tools-css]")) {
  document.head.append(h("link", { rel: "stylesheet", href: new URL("../css/tools.css", import.meta.url).href, "data-tools-css": true }));
}

let toolsPromise = null;
function loadTools() {
  toolsPromise ??= api("/api/tools/?limit=1000").then(listOf).catch((err) => {
    toolsPromise = null;
    throw err;
  });
  return toolsPromise;
}

const agentUrl = (slug) => `/api/agents/${encodeURIComponent(slug)}/tools/`;

function chipKeys(card) {
  return new Set([...card.querySelectorAll(".chips .chip")].map((chip) => chip.dataset.key || chip.textContent.trim()));
}

// The server marks the cards whose tools this user may change (the agent's editor policy
// and the user's permission): only those get "Add tool" and remove buttons.
const toolsOpen = (card) => card.hasAttribute("data-tools-open");

function decorateChip(card, chip) {
  if (!toolsOpen(card) || chip.dataset.source !== "studio" || chip.querySelector(".chip-remove")) return;
  const key = chip.dataset.key;
  chip.append(h("button", {
    type: "button", class: "chip-remove", title: `Remove ${key} from this agent`, "aria-label": `Remove ${key}`,
    onclick: async (event) => {
      event.stopPropagation();
      const button = event.currentTarget;
      button.disabled = true;
      chip.classList.add("is-leaving");
      try {
        await api(`${agentUrl(card.dataset.agent)}${encodeURIComponent(key)}/`, { method: "DELETE" });
        chip.remove();
      } catch (err) {
        chip.classList.remove("is-leaving");
        button.disabled = false;
        flash(card, err.message);
      }
    },
  }, "×"));
}

function flash(card, message) {
  card.querySelector(".card-flash")?.remove();
  const note = h("div", { class: "card-flash error", role: "alert" }, message);
  card.append(note);
  setTimeout(() => note.remove(), 6000);
}

function closePopovers(except = null) {
  for (const pop of document.querySelectorAll(".add-tool-pop")) {
    if (pop !== except) {
      pop.closest(".agent-card")?.classList.remove("is-adding");
      pop.remove();
    }
  }
}

async function openPicker(card) {
  if (card.querySelector(".add-tool-pop")) {
    closePopovers();
    return;
  }
  closePopovers();
  card.classList.add("is-adding");
  const slug = card.dataset.agent;
  const search = h("input", { type: "search", class: "pick-search", placeholder: "Find a tool…", "aria-label": "Find a tool" });
  const list = h("ul", { class: "pick-list", role: "listbox", "aria-label": "Tools" }, h("li", { class: "muted" }, "Loading tools…"));
  const key = h("input", { class: "pick-key", name: "key", autocomplete: "off", spellcheck: "false", disabled: true,
    "aria-label": "Key the model sees" });
  const keyHelp = h("div", { class: "pick-help" }, KEY_HINT);
  const add = h("button", { type: "submit", class: "primary pick-add", disabled: true }, "Add tool");
  const cancel = h("button", { type: "button", class: "secondary", onclick: () => closePopovers() }, "Cancel");
  const error = h("div", { class: "pick-error error", role: "alert", hidden: true });
  const pop = h("form", { class: "add-tool-pop", novalidate: true },
    h("div", { class: "pick-title" }, h("strong", {}, "Add a tool"), h("a", { href: "/tools/new/" }, "Create a new tool →")),
    search, list,
    h("label", { class: "pick-key-label" }, h("span", {}, "Key the model sees"), key), keyHelp, error,
    h("div", { class: "pick-actions" }, cancel, add));
  card.append(pop);
  let chosen = null;
  let keyTouched = false;

  const validateKey = () => {
    const value = key.value;
    let problem = "";
    if (!KEY_RE.test(value)) problem = value ? "Only letters, digits, _ or - (at most 64)." : "Give the key the model will see.";
    else if (chipKeys(card).has(value)) problem = `This agent already has a tool called “${value}”.`;
    keyHelp.textContent = problem || KEY_HINT;
    keyHelp.classList.toggle("is-warning", Boolean(problem));
    key.toggleAttribute("aria-invalid", Boolean(problem));
    add.disabled = !chosen || Boolean(problem);
    return !problem;
  };
  key.addEventListener("input", () => { keyTouched = true; error.hidden = true; validateKey(); });

  const choose = (tool, row) => {
    chosen = tool;
    for (const other of list.querySelectorAll(".pick-row")) other.setAttribute("aria-selected", String(other === row));
    key.disabled = false;
    if (!keyTouched) key.value = tool.name;
    validateKey();
    key.focus();
    key.select();
  };

  let tools = [];
  // Everyone runs a code agent, so the server lets it take shared (code) tools only.
  const sharedOnly = Boolean(card.querySelector(".badge-code"));
  if (sharedOnly) {
    list.after(h("div", { class: "pick-help pick-note" },
      "A code agent is shared by everyone: it takes shared tools only."));
  }
  const renderList = () => {
    const q = search.value.trim().toLowerCase();
    const bound = new Set([...card.querySelectorAll(".chips .chip")].map((chip) => chip.title));
    const shown = tools.filter((t) => (!sharedOnly || t.source === "code")
      && (!q || t.name.includes(q) || (t.description || "").toLowerCase().includes(q)));
    if (!shown.length) {
      fill(list, h("li", { class: "muted" }, tools.length ? "No tool matches." : "No tools yet."));
      return;
    }
    fill(list, shown.map((tool) => {
      const row = h("li", { class: "pick-row", role: "option", tabindex: "0", "data-tool": tool.name,
        "aria-selected": String(chosen?.name === tool.name) },
      h("span", { class: "pick-name" }, tool.name),
      bound.has(tool.name) ? h("span", { class: "pick-bound", title: "Already on this agent" }, "added") : null,
      h("span", { class: `kind kind-${tool.kind}` }, kindLabel(tool.kind)));
      row.addEventListener("click", () => choose(tool, row));
      row.addEventListener("keydown", (event) => {
        if (event.key === "Enter" || event.key === " ") { event.preventDefault(); choose(tool, row); }
      });
      return row;
    }));
  };
  search.addEventListener("input", renderList);

  pop.addEventListener("submit", async (event) => {
    event.preventDefault();
    if (!chosen || !validateKey()) return;
    add.disabled = true;
    error.hidden = true;
    try {
      const binding = await api(agentUrl(slug), { method: "POST", body: { tool: chosen.name, key: key.value } });
      addChip(card, binding);
      closePopovers();
    } catch (err) {
      const fields = err instanceof ApiError ? err.fieldErrors : {};
      if (fields.key) {
        keyHelp.textContent = fields.key;
        keyHelp.classList.add("is-warning");
      }
      const rest = Object.entries(fields).filter(([k]) => k !== "key").map(([, v]) => flattenMessages(v));
      if (rest.length || !fields.key) {
        error.hidden = false;
        error.textContent = rest.join(" ") || err.message;
      }
      add.disabled = false;
    }
  });
  pop.addEventListener("keydown", (event) => { if (event.key === "Escape") closePopovers(); });

  try {
    tools = await loadTools();
  } catch (err) {
    fill(list, h("li", { class: "error" }, `Could not load tools: ${err.message}`));
    return;
  }
  renderList();
  search.focus();
}

function addChip(card, binding) {
  let chips = card.querySelector(".chips");
  if (!chips) {
    chips = h("ul", { class: "chips" });
    card.append(chips);
  }
  const chip = h("li", { class: "chip chip-new", title: binding.tool, "data-key": binding.key, "data-source": binding.source || "studio" }, binding.key);
  // Tool chips come before the sub-agent chips, as the server renders them.
  const firstAgent = chips.querySelector(".chip-agent");
  chips.insertBefore(chip, firstAgent);
  decorateChip(card, chip);
}

for (const card of document.querySelectorAll(".agent-card[data-agent]")) {
  for (const chip of card.querySelectorAll(".chips .chip[data-key]")) decorateChip(card, chip);
  if (!toolsOpen(card)) continue;
  let actions = card.querySelector(".card-actions");
  if (!actions) {
    actions = h("div", { class: "card-actions" });
    card.append(actions);
  }
  actions.append(h("button", { type: "button", class: "add-tool", "aria-haspopup": "dialog",
    onclick: () => openPicker(card) }, "+ Add tool"));
}

document.addEventListener("click", (event) => {
  if (!event.target.closest(".add-tool-pop, .add-tool")) closePopovers();
});
document.body.dataset.homeReady = "1";
