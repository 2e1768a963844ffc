// /traces/: the user's runs with their trace totals, filtered and searched; each row links
// to its trace and its chat.
import { api, ApiError, flattenMessages } from "../js/lib/api.js";
import { fill, h } from "../js/lib/dom.js";
import { formatDuration, fullTime, timeAgo } from "../js/lib/format.js";

const form = document.getElementById("runs-filters");
const rows = document.getElementById("runs-rows");
const errors = document.getElementById("runs-errors");

// The form's filled fields as the API's query; dates become the start of their day (UTC).
function query() {
  const params = new URLSearchParams();
  for (const [key, value] of new FormData(form)) {
    if (value === "") continue;
    params.set(key, ["since", "until"].includes(key) ? `${value}T00:00:00Z` : value);
  }
  return params;
}

function row(run) {
  return h("tr", { dataset: { runId: run.id, status: run.status } },
    h("td", {}, h("time", { datetime: run.createdAt, title: fullTime(run.createdAt) }, timeAgo(run.createdAt))),
    h("td", {}, run.agentName, " ", h("span", { class: "muted small" }, run.model)),
    h("td", {}, h("a", { href: `/chat/t/${run.threadId}/` }, run.title || "(untitled)")),
    h("td", { class: `run-status status-${run.status}`, title: run.error || null }, run.status),
    h("td", { class: "num" }, formatDuration(run.durationMs)),
    h("td", { class: "num" }, run.tokens ?? "—"),
    h("td", { class: "num" }, run.costUsd === null ? "—" : run.costUsd.toFixed(4)),
    h("td", {}, h("a", { class: "run-trace-link", href: `/traces/${run.id}/` }, "view trace")));
}

async function load() {
  errors.hidden = true;
  try {
    const data = await api(`/api/traces/?${query()}`);
    document.getElementById("runs-count").textContent = `(${data.count})`;
    fill(rows, data.results.length ? data.results.map(row) : h("tr", {}, h("td", { colspan: 8, class: "muted" }, "No runs match.")));
  } catch (error) {
    errors.hidden = false;
    errors.textContent = error instanceof ApiError ? `${error.message} ${flattenMessages(error.fieldErrors)}` : error.message;
  }
}

form.addEventListener("submit", (event) => {
  event.preventDefault();
  load();
});
load();
