// /tests/runs/<id>/: a suite run's results, per case and attempt with each expectation's
// verdict and reason, linked to the chat and to each turn's trace; a progress bar fed by
// /ws/evals/<id>/.
import { api } from "../js/lib/api.js";
import { h, fill } from "../js/lib/dom.js";

const root = document.getElementById("ev-run");
const runId = root.dataset.run;
const initial = JSON.parse(document.getElementById("run-data").textContent);
const results = new Map(initial.results.map((r) => [r.id, r]));
let run = initial;

function verdictItem(verdict) {
  return h("li", { class: verdict.passed ? "pass" : "fail", dataset: { type: verdict.type } },
    `${verdict.passed ? "✓" : "✗"} ${verdict.type}: ${verdict.reason}`);
}

function turnBlock(turn) {
  return h("div", { class: "ev-turn" },
    h("div", { class: "small muted" }, `turn ${turn.index + 1}: ${turn.message}`),
    turn.error ? h("div", { class: "doc-error" }, turn.error) : null,
    h("ul", { class: "ev-verdicts" }, ...(turn.verdicts || []).map(verdictItem)),
    turn.runId ? h("a", { class: "small ev-trace", href: `/traces/${encodeURIComponent(turn.runId)}/` }, "View trace") : null);
}

function caseBlock(summary) {
  const attempts = [...results.values()].filter((r) => r.case === summary.case)
    .sort((a, b) => a.attempt - b.attempt);
  return h("div", { class: "ev-case", dataset: { case: summary.name, status: summary.status } },
    h("h3", {}, summary.name,
      h("span", { class: `ev-status ev-${summary.status}` }, summary.status),
      run.repeat > 1 ? h("span", { class: "small" }, `${summary.passed}/${summary.attempts} passed`) : null,
      summary.flaky ? h("span", { class: "badge" }, "flaky") : null),
    ...attempts.map((r) => h("div", { class: "ev-attempt", dataset: { attempt: String(r.attempt), status: r.status } },
      run.repeat > 1 ? h("div", { class: "small" }, `attempt ${r.attempt}: ${r.status}`) : null,
      r.error && !r.turns.length ? h("div", { class: "doc-error" }, r.error) : null,
      ...r.turns.map(turnBlock),
      r.chatUrl ? h("a", { class: "small ev-chat", href: r.chatUrl }, "Open the chat") : null)));
}

function render() {
  const summary = run.summary || {};
  const total = summary.total || 0;
  const done = summary.done || 0;
  document.getElementById("progress-fill").style.width = total ? `${(100 * done) / total}%` : "0";
  const bar = document.getElementById("progress-bar");
  bar.setAttribute("aria-valuemax", String(total));
  bar.setAttribute("aria-valuenow", String(done));
  document.getElementById("progress-text").textContent =
    `${done} / ${total} done · ${summary.casesPassed || 0} passed · ${summary.casesFailed || 0} failed` +
    (summary.flaky ? ` · ${summary.flaky} flaky` : "");
  const status = document.getElementById("run-status");
  status.textContent = run.status;
  status.className = `ev-status ev-${run.status}`;
  root.dataset.status = run.status;
  root.dataset.done = String(done);
  fill(document.getElementById("case-list"), ...(summary.cases || []).map(caseBlock));
}

let retry = 500;
function connect() {
  const scheme = location.protocol === "https:" ? "wss" : "ws";
  const socket = new WebSocket(`${scheme}://${location.host}/ws/evals/${encodeURIComponent(runId)}/`);
  socket.addEventListener("open", () => { retry = 500; root.dataset.socket = "open"; });
  socket.addEventListener("message", (message) => {
    const event = JSON.parse(message.data);
    if (event.type !== "progress") return;
    run = { ...run, ...event.run };
    if (event.result) results.set(event.result.id, event.result);
    render();
  });
  socket.addEventListener("close", async () => {
    root.dataset.socket = "closed";
    if (["passed", "failed"].includes(run.status)) return;
    try {
      const fresh = await api(`/api/suite-runs/${encodeURIComponent(runId)}/`);
      run = fresh;
      for (const r of fresh.results) results.set(r.id, r);
      render();
    } catch { /* the reconnect tries again */ }
    setTimeout(connect, retry);
    retry = Math.min(retry * 2, 15000);
  });
}

render();
connect();
