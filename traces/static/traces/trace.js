// /traces/<run>/ and /traces/tool-runs/<tool run>/: the trace as a waterfall (the page names
// its API in data-trace-url); a row opens to the span's facts, inputs
// and outputs (tool values as the chat shows them, through the tool's display transform).
import { api } from "../js/lib/api.js";
import { fill, h } from "../js/lib/dom.js";
import { formatDuration, formatInline, formatJson, fullTime } from "../js/lib/format.js";
import { details, layout } from "./waterfall.js";

const root = document.getElementById("trace-app");
const list = document.getElementById("trace-rows");
const summary = document.getElementById("trace-summary");

function spanDetails(span) {
  const { facts, sections } = details(span);
  return h("div", { class: "span-details" },
    span.error ? h("p", { class: "error" }, span.error) : null,
    h("dl", { class: "span-facts" }, facts.flatMap(([key, value]) => [h("dt", {}, key), h("dd", {}, formatInline(value))])),
    sections.map(([label, value]) => h("details", { class: "span-section", open: label !== "Tools" },
      h("summary", {}, label), h("pre", {}, formatJson(value)))));
}

function row({ span, depth, open, offset, width, durationMs }) {
  const detailsBox = h("div", { class: "span-more", hidden: true });
  const toggle = () => {
    if (!detailsBox.firstChild) detailsBox.append(spanDetails(span));
    detailsBox.hidden = !detailsBox.hidden;
    line.setAttribute("aria-expanded", String(!detailsBox.hidden));
  };
  // Places are set through the CSSOM: the Content-Security-Policy refuses style attributes.
  const name = h("span", { class: "span-name" }, h("span", { class: "span-kind" }, span.kind), " ", span.name);
  name.style.paddingLeft = `${depth * 16}px`;
  const bar = h("span", { class: `span-bar${open ? " is-open" : ""}` });
  Object.assign(bar.style, { left: `${offset}%`, width: `${width}%` });
  const line = h("button", {
    class: `span-line kind-${span.kind} status-${span.status}`, type: "button", onclick: toggle,
    "aria-expanded": "false", dataset: { spanId: span.id, kind: span.kind },
  }, name, h("span", { class: "span-track" }, bar),
  h("span", { class: "span-duration" }, open ? `${formatDuration(durationMs)}, open` : formatDuration(durationMs)));
  return h("li", { class: "span-row" }, line, detailsBox);
}

async function load() {
  const { spans } = await api(root.dataset.traceUrl);
  if (!spans.length) {
    fill(list, h("li", { class: "muted" }, "This run recorded no spans."));
    return;
  }
  const { rows, totalMs } = layout(spans);
  const models = spans.filter((span) => span.kind === "model");
  const tokens = models.reduce((sum, span) => sum + (span.attributes.input_tokens || 0) + (span.attributes.output_tokens || 0), 0);
  const cost = models.reduce((sum, span) => sum + (span.attributes.cost_usd || 0), 0);
  fill(summary, `${spans.length} spans · ${formatDuration(totalMs)} · ${models.length} model calls · ${tokens} tokens · $${cost.toFixed(4)} · started ${fullTime(spans[0].start)}`);
  fill(list, rows.map(row));
}

load().catch((error) => fill(list, h("li", { class: "error" }, error.message)));
