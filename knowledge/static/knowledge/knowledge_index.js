// /knowledge/: the user's knowledge bases and the form that creates one.
import { api, ApiError } from "../js/lib/api.js";
import { h } from "../js/lib/dom.js";

const list = document.getElementById("kb-list");
const form = document.getElementById("kb-form");
const errors = document.getElementById("kb-errors");

async function load() {
  const data = await api("/api/knowledge/");
  const bases = data.results || [];
  document.getElementById("kb-count").textContent = `(${bases.length})`;
  if (!bases.length) {
    list.replaceChildren(h("li", { class: "empty" }, "No knowledge base yet: create one to add documents."));
    return;
  }
  list.replaceChildren(...bases.map((kb) => h("li", { class: "card", dataset: { slug: kb.slug } },
    h("a", { class: "name", href: `/knowledge/${encodeURIComponent(kb.slug)}/` }, kb.name),
    h("span", { class: "muted" }, `${kb.documents} document${kb.documents === 1 ? "" : "s"}`),
    h("span", { class: "badge" }, kb.search_mode === "hybrid" ? `hybrid · ${kb.embedding_model}` : "full text only"),
    kb.description ? h("span", { class: "muted small" }, kb.description) : null)));
}

form.addEventListener("submit", async (event) => {
  event.preventDefault();
  errors.hidden = true;
  const body = Object.fromEntries(new FormData(form).entries());
  try {
    const kb = await api("/api/knowledge/", { method: "POST", body });
    location.href = `/knowledge/${encodeURIComponent(kb.slug)}/`;
  } catch (err) {
    errors.hidden = false;
    const fields = err instanceof ApiError ? err.fieldErrors : {};
    errors.textContent = Object.values(fields).filter(Boolean).join(" ") || err.message;
  }
});

load().catch((err) => { list.replaceChildren(h("li", { class: "error" }, err.message)); });
