// /traces/: usage over the last days as charts (uPlot, vendored as an ES module) and
// tables: tokens, cost, runs and errors per day; latency percentiles; per agent and model.
import uPlot from "../vendor/uplot/uPlot.esm.js";
import { api } from "../js/lib/api.js";
import { fill, h } from "../js/lib/dom.js";
import { formatDuration } from "../js/lib/format.js";
import { dailySeries } from "./usage_series.js";

const select = document.getElementById("usage-days");
const charts = [];

function chart(id, series, data) {
  const target = document.getElementById(id);
  const width = Math.max(target.clientWidth, 280);
  const plot = new uPlot({
    width, height: 180, series: [{}, ...series], scales: { x: { time: true } },
    axes: [{}, { size: 60 }],
  }, data, target);
  charts.push(plot);
}

function tables(data) {
  const latency = document.querySelector("#latency-table tbody");
  const labels = { run: "run", modelCall: "model call", timeToFirstToken: "time to first token" };
  fill(latency, Object.entries(data.latencyMs).map(([key, p]) => h("tr", {},
    h("td", {}, labels[key] || key), ["p50", "p95", "p99"].map((name) => h("td", { class: "num" }, formatDuration(p[name]))))));
  const totals = new Map();
  for (const row of data.usage) {
    const key = `${row.agent} ${row.model}`;
    const sum = totals.get(key) || { agent: row.agent, model: row.model, calls: 0, inputTokens: 0, outputTokens: 0, costUsd: 0 };
    for (const field of ["calls", "inputTokens", "outputTokens", "costUsd"]) sum[field] += row[field];
    totals.set(key, sum);
  }
  fill(document.querySelector("#usage-table tbody"), totals.size ? [...totals.values()].map((sum) => h("tr", {},
    h("td", {}, sum.agent), h("td", {}, sum.model), h("td", { class: "num" }, sum.calls),
    h("td", { class: "num" }, sum.inputTokens), h("td", { class: "num" }, sum.outputTokens),
    h("td", { class: "num" }, sum.costUsd.toFixed(4)))) : h("tr", {}, h("td", { colspan: 6, class: "muted" }, "No model calls in this range.")));
}

async function load() {
  const data = await api(`/api/usage/?days=${select.value}`);
  document.getElementById("usage-range").textContent = `(${new Date(data.since).toLocaleDateString()} to now)`;
  const series = dailySeries(data);
  for (const plot of charts.splice(0)) plot.destroy();
  chart("chart-tokens", [
    { label: "tokens in", stroke: "#3559e0" }, { label: "tokens out", stroke: "#7c4dde" },
  ], [series.x, series.inputTokens, series.outputTokens]);
  chart("chart-cost", [{ label: "USD", stroke: "#1f8a4c" }], [series.x, series.costUsd]);
  chart("chart-runs", [
    { label: "runs", stroke: "#3559e0" }, { label: "errors", stroke: "#c53030" },
  ], [series.x, series.runs, series.errors]);
  tables(data);
}

select.addEventListener("change", load);
load();
