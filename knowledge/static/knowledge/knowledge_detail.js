// /knowledge/<slug>/: documents with their status, adding files, pages and text, the
// ingestion progress pushed on /ws/knowledge/<slug>/, re-index and delete, and search.
import { api, ApiError, csrfToken } from "../js/lib/api.js";
import { h } from "../js/lib/dom.js";
import { renderCitations } from "../js/lib/citations.js";

const root = document.getElementById("kn-detail");
const slug = root.dataset.slug;
const base = `/api/knowledge/${encodeURIComponent(slug)}`;
const rows = document.getElementById("doc-rows");
const docs = new Map();

function errorText(err) {
  const fields = err instanceof ApiError ? Object.values(err.fieldErrors).filter(Boolean) : [];
  return fields.length ? fields.join(" ") : err.message;
}

function showError(id, err) {
  const box = document.getElementById(id);
  box.hidden = !err;
  box.textContent = err ? errorText(err) : "";
}

// --- documents ---------------------------------------------------------------------------
function docRow(doc) {
  const chunks = doc.status === "embedding" || doc.status === "parsing"
    ? `${doc.chunks_done} / ${doc.chunk_count || "…"}`
    : String(doc.chunk_count);
  const name = h("a", { href: doc.viewer_url }, doc.name);
  const cells = [
    h("td", {}, name, doc.kind === "url" ? h("div", { class: "muted small" }, doc.source_url) : null,
      doc.error ? h("div", { class: "doc-error" }, doc.error) : null),
    h("td", {}, doc.format || ""),
    h("td", {}, h("span", { class: `status status-${doc.status}` }, doc.status)),
    h("td", {}, chunks),
    h("td", { class: "actions" },
      h("button", { class: "secondary", type: "button", dataset: { action: "reindex" }, disabled: ["queued", "parsing", "embedding"].includes(doc.status) }, "Re-index"),
      " ",
      h("button", { class: "secondary", type: "button", dataset: { action: "delete" } }, "Delete")),
  ];
  return h("tr", { dataset: { id: String(doc.id), status: doc.status } }, ...cells);
}

function renderDocs() {
  const list = [...docs.values()].sort((a, b) => a.id - b.id);
  document.getElementById("doc-count").textContent = `(${list.length})`;
  if (!list.length) {
    rows.replaceChildren(h("tr", {}, h("td", { colspan: "5", class: "empty" }, "No documents yet: add files, a web page or text.")));
    return;
  }
  rows.replaceChildren(...list.map(docRow));
}

function upsertDoc(doc) {
  if (!doc) return;
  docs.set(doc.id, doc);
  const existing = rows.querySelector(`tr[data-id="${doc.id}"]`);
  if (existing) existing.replaceWith(docRow(doc));
  else renderDocs();
}

async function loadDocs() {
  const data = await api(`${base}/documents/`);
  docs.clear();
  for (const doc of data.results) docs.set(doc.id, doc);
  renderDocs();
}

rows.addEventListener("click", async (event) => {
  const button = event.target.closest("button[data-action]");
  if (!button) return;
  const id = Number(button.closest("tr").dataset.id);
  try {
    if (button.dataset.action === "reindex") {
      upsertDoc(await api(`${base}/documents/${id}/reindex`, { method: "POST" }));
    } else if (confirm("Delete this document and its chunks?")) {
      await api(`${base}/documents/${id}/`, { method: "DELETE" });
      docs.delete(id);
      renderDocs();
    }
  } catch (err) {
    showError("add-errors", err);
  }
});

// --- progress ----------------------------------------------------------------------------
function showProgress(progress) {
  if (!progress) return;
  const active = progress.active || 0;
  const total = progress.chunks_total || 0;
  const done = progress.chunks_done || 0;
  const fill = document.getElementById("progress-fill");
  const text = document.getElementById("progress-text");
  const finishedDocs = progress.ready + progress.failed + progress.cancelled;
  fill.style.width = active ? `${total ? Math.round((100 * done) / total) : 0}%` : "100%";
  const parts = [`${finishedDocs} of ${progress.documents} documents done`];
  if (active) parts.push(`${done} of ${total} chunks`);
  if (active && progress.rate_chunks_per_s) parts.push(`${progress.rate_chunks_per_s} chunks/s`);
  if (progress.failed) parts.push(`${progress.failed} failed`);
  text.textContent = parts.join(" · ");
  root.dataset.active = String(active);
  document.getElementById("cancel-ingest").hidden = !active;
}

let socket = null;
let retry = 500;
let pollTimer = null;

function connect() {
  const scheme = location.protocol === "https:" ? "wss" : "ws";
  socket = new WebSocket(`${scheme}://${location.host}/ws/knowledge/${encodeURIComponent(slug)}/`);
  socket.addEventListener("open", () => {
    retry = 500;
    root.dataset.socket = "open";
    clearInterval(pollTimer);
    pollTimer = null;
  });
  socket.addEventListener("message", (message) => {
    const event = JSON.parse(message.data);
    if (event.type !== "progress") return;
    showProgress(event.progress);
    upsertDoc(event.document);
  });
  socket.addEventListener("close", () => {
    root.dataset.socket = "closed";
    if (!pollTimer) pollTimer = setInterval(poll, 3000);
    setTimeout(connect, retry);
    retry = Math.min(retry * 2, 15000);
  });
}

async function poll() {
  try {
    showProgress(await api(`${base}/progress`));
    await loadDocs();
  } catch { /* the next poll tries again */ }
}

document.getElementById("cancel-ingest").addEventListener("click", async () => {
  await api(`${base}/cancel`, { method: "POST" });
  await loadDocs();
});

// --- adding ------------------------------------------------------------------------------
for (const tab of document.querySelectorAll(".tab[data-tab]")) {
  tab.addEventListener("click", () => {
    for (const other of document.querySelectorAll(".tab[data-tab]")) {
      other.classList.toggle("is-active", other === tab);
      other.setAttribute("aria-selected", String(other === tab));
    }
    for (const panel of document.querySelectorAll(".tab-panel[data-panel]")) panel.hidden = panel.dataset.panel !== tab.dataset.tab;
  });
}

async function added(promise, form) {
  showError("add-errors", null);
  try {
    const data = await promise;
    for (const doc of data.results) upsertDoc(doc);
    form.reset();
  } catch (err) {
    showError("add-errors", err);
  }
}

document.getElementById("add-file").addEventListener("submit", (event) => {
  event.preventDefault();
  const form = event.currentTarget;
  const upload = async () => {
    const response = await fetch(`${base}/documents/`, {
      method: "POST",
      body: new FormData(form),
      headers: { "X-CSRFToken": csrfToken(), Accept: "application/json" },
      credentials: "same-origin",
    });
    const body = await response.json().catch(() => null);
    if (!response.ok) throw new ApiError(response.status, body);
    return body;
  };
  added(upload(), form);
});

document.getElementById("add-url").addEventListener("submit", (event) => {
  event.preventDefault();
  const form = event.currentTarget;
  const data = Object.fromEntries(new FormData(form).entries());
  const body = { url: data.url, depth: Number(data.depth || 0) };
  if (body.depth > 0) body.max_pages = Number(data.max_pages || 20);
  added(api(`${base}/documents/`, { method: "POST", body }), form);
});

document.getElementById("add-text").addEventListener("submit", (event) => {
  event.preventDefault();
  const form = event.currentTarget;
  added(api(`${base}/documents/`, { method: "POST", body: Object.fromEntries(new FormData(form).entries()) }), form);
});

// --- search ------------------------------------------------------------------------------
document.getElementById("search-form").addEventListener("submit", async (event) => {
  event.preventDefault();
  const data = Object.fromEntries(new FormData(event.currentTarget).entries());
  const results = document.getElementById("search-results");
  showError("search-errors", null);
  try {
    const result = await api(`${base}/search`, { method: "POST", body: { query: data.query, mode: data.mode, k: Number(data.k || 5) } });
    results.replaceChildren(renderCitations(result));
    results.dataset.mode = result.mode;
  } catch (err) {
    results.replaceChildren();
    showError("search-errors", err);
  }
});

document.getElementById("tool-form").addEventListener("submit", async (event) => {
  event.preventDefault();
  const name = new FormData(event.currentTarget).get("name");
  const done = document.getElementById("tool-done");
  try {
    const tool = await api(`${base}/tool`, { method: "POST", body: { name } });
    done.replaceChildren("Created ", h("a", { href: `/tools/${encodeURIComponent(tool.name)}/` }, tool.name),
      ": add it to an agent on the home page, or test it in the tool console.");
  } catch (err) {
    done.textContent = errorText(err);
  }
});

loadDocs().then(() => poll()).catch((err) => rows.replaceChildren(h("tr", {}, h("td", { colspan: "5", class: "error" }, err.message))));
connect();
