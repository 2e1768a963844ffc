// The declared widgets of widget tools (tools_app/types/widget, docs/tools.md "Widget
// tools"): card, table and chart drawn from the call's result {widget: {kind, ...}}, and
// the controls of the choice list and the form a suspended call waits on.
//
// Everything here is built with createElement / createElementNS and text nodes: a
// widget's strings are never parsed as markup and no script a tool supplies ever runs.
// Links are followed only when their URL is http(s); card images are shown as links (the
// page's Content-Security-Policy loads only the studio's own images, and a tool's image
// URL would tell a third party who looks at the chat).

import { h } from "./dom.js";

const SVG = "http://www.w3.org/2000/svg";
const PALETTE = ["#2563eb", "#dc2626", "#16a34a", "#d97706", "#7c3aed", "#0891b2", "#db2777", "#4b5563"];

// An http(s) URL as the browser resolves it, or null for anything else (javascript:,
// data:, relative paths...).
export function safeUrl(value) {
  if (typeof value !== "string") return null;
  try {
    const url = new URL(value);
    return url.protocol === "http:" || url.protocol === "https:" ? url.href : null;
  } catch {
    return null;
  }
}

function link(label, url) {
  const href = safeUrl(url);
  if (!href) return h("span", { class: "widget-link-refused muted", title: "Not an http(s) link" }, label);
  return h("a", { href, target: "_blank", rel: "noopener noreferrer nofollow" }, label, " ↗");
}

function cellText(value) {
  if (value === null || value === undefined) return "";
  return typeof value === "string" ? value : JSON.stringify(value);
}

export function renderCard(widget) {
  const title = safeUrl(widget.url) ? link(cellText(widget.title), widget.url) : cellText(widget.title);
  const fields = Array.isArray(widget.fields) ? widget.fields : [];
  const links = Array.isArray(widget.links) ? widget.links : [];
  return h("section", { class: "declared-widget widget-card" },
    h("h4", { class: "widget-card-title" }, title),
    widget.subtitle ? h("div", { class: "widget-card-subtitle muted" }, cellText(widget.subtitle)) : null,
    widget.body ? h("p", { class: "widget-card-body" }, cellText(widget.body)) : null,
    fields.length ? h("dl", { class: "widget-card-fields" }, fields.map((field) => [
      h("dt", {}, cellText(field.label)), h("dd", {}, cellText(field.value))])) : null,
    widget.image ? h("div", { class: "widget-card-image" }, link("Image", widget.image)) : null,
    links.length ? h("div", { class: "widget-card-links" }, links.map((item) => link(cellText(item.label), item.url))) : null);
}

export function renderTable(widget) {
  const columns = Array.isArray(widget.columns) ? widget.columns : [];
  const rows = Array.isArray(widget.rows) ? widget.rows : [];
  return h("section", { class: "declared-widget widget-table" },
    widget.title ? h("h4", {}, cellText(widget.title)) : null,
    h("div", { class: "widget-table-scroll" },
      h("table", {},
        h("thead", {}, h("tr", {}, columns.map((column) => h("th", { scope: "col" }, cellText(column))))),
        h("tbody", {}, rows.map((row) => h("tr", {}, (Array.isArray(row) ? row : []).map((cell) =>
          h("td", { class: typeof cell === "number" ? "num" : null }, cellText(cell)))))))));
}

function svg(tag, attrs = {}, ...children) {
  const node = document.createElementNS(SVG, tag);
  for (const [key, value] of Object.entries(attrs)) if (value !== null && value !== undefined) node.setAttribute(key, String(value));
  for (const child of children.flat()) if (child !== null && child !== undefined) node.append(child instanceof Node ? child : document.createTextNode(String(child)));
  return node;
}

function niceMax(value) {
  if (value <= 0) return 1;
  const step = 10 ** Math.floor(Math.log10(value));
  return Math.ceil(value / step) * step;
}

// A line or bar chart as SVG: one x label per point, one colour per series, a legend.
export function renderChart(widget) {
  const x = Array.isArray(widget.x) ? widget.x : [];
  const series = (Array.isArray(widget.series) ? widget.series : []).slice(0, PALETTE.length);
  const numbers = series.flatMap((s) => (s.values || []).filter((v) => typeof v === "number"));
  const low = Math.min(0, ...numbers);
  const high = niceMax(Math.max(0, ...numbers) - low) + low;
  const width = 560;
  const height = 240;
  const pad = { left: 48, right: 12, top: 12, bottom: 36 };
  const plotW = width - pad.left - pad.right;
  const plotH = height - pad.top - pad.bottom;
  const slot = plotW / Math.max(x.length, 1);
  const xAt = (i) => pad.left + slot * (i + 0.5);
  const yAt = (v) => pad.top + plotH - ((v - low) / (high - low || 1)) * plotH;
  const grid = [0, 0.25, 0.5, 0.75, 1].map((f) => {
    const value = low + (high - low) * f;
    const y = yAt(value);
    return svg("g", { class: "chart-grid" },
      svg("line", { x1: pad.left, x2: width - pad.right, y1: y, y2: y, stroke: "#e5e7eb" }),
      svg("text", { x: pad.left - 6, y: y + 4, "text-anchor": "end", "font-size": 11, fill: "#6b7280" }, String(+value.toPrecision(4))));
  });
  const every = Math.max(1, Math.ceil(x.length / 12));
  const labels = x.map((label, i) => (i % every ? null : svg("text", {
    x: xAt(i), y: height - pad.bottom + 16, "text-anchor": "middle", "font-size": 11, fill: "#374151" }, cellText(label))));
  const marks = series.map((s, si) => {
    const colour = PALETTE[si];
    const values = s.values || [];
    if (widget.type === "bar") {
      const barW = (slot * 0.8) / series.length;
      return svg("g", { class: "chart-series", "data-series": cellText(s.name) }, values.map((v, i) => {
        if (typeof v !== "number") return null;
        const top = yAt(Math.max(v, 0));
        return svg("rect", { x: xAt(i) - slot * 0.4 + barW * si, y: top, width: Math.max(barW - 1, 1), height: Math.abs(yAt(v) - yAt(0)) || 1, fill: colour },
          svg("title", {}, `${cellText(s.name)} · ${cellText(x[i])}: ${v}`));
      }));
    }
    const points = values.map((v, i) => (typeof v === "number" ? `${xAt(i)},${yAt(v)}` : null)).filter(Boolean);
    return svg("g", { class: "chart-series", "data-series": cellText(s.name) },
      svg("polyline", { points: points.join(" "), fill: "none", stroke: colour, "stroke-width": 2 }),
      values.map((v, i) => (typeof v === "number" ? svg("circle", { cx: xAt(i), cy: yAt(v), r: 3, fill: colour },
        svg("title", {}, `${cellText(s.name)} · ${cellText(x[i])}: ${v}`)) : null)));
  });
  const chart = svg("svg", { viewBox: `0 0 ${width} ${height}`, role: "img", "aria-label": cellText(widget.title), class: "widget-chart-svg" },
    grid, svg("line", { x1: pad.left, x2: width - pad.right, y1: yAt(0), y2: yAt(0), stroke: "#9ca3af" }), labels, marks);
  return h("section", { class: "declared-widget widget-chart" },
    h("h4", {}, cellText(widget.title)),
    widget.y_label ? h("div", { class: "widget-axis muted" }, cellText(widget.y_label)) : null,
    chart,
    widget.x_label ? h("div", { class: "widget-axis widget-axis-x muted" }, cellText(widget.x_label)) : null,
    h("ul", { class: "widget-legend" }, series.map((s, si) => h("li", {},
      h("span", { class: `legend-swatch legend-${si}` }), cellText(s.name)))));
}

const RENDERERS = { card: renderCard, table: renderTable, chart: renderChart };

// A widget tool's result: the widget it declares, or (a choice or form, answered) the
// answer as a value.
export function renderWidgetResult(output) {
  const widget = output && typeof output === "object" ? output.widget : null;
  const render = widget && RENDERERS[widget.kind];
  if (!render) return null;
  return render(widget);
}

// --- the controls of an interactive widget (the run waits for them) -------------------
// An option as {value, label, description}: a plain value, or an object naming them.
export function optionOf(option) {
  if (option && typeof option === "object") {
    const value = option.value ?? option.id ?? option.label;
    return { value: String(value), label: String(option.label ?? value), description: option.description || "" };
  }
  return { value: String(option), label: String(option), description: "" };
}

export function choiceControls(widget) {
  const multiple = widget.multiple === true;
  const name = `choice-${Math.random().toString(36).slice(2, 8)}`;
  const controls = [h("div", { class: `choices choices-${multiple ? "multi" : "single"}`, role: multiple ? "group" : "radiogroup" },
    (widget.options || []).map(optionOf).map((option) => h("label", { class: "choice" },
      h("input", { type: multiple ? "checkbox" : "radio", name, value: option.value }),
      h("span", { class: "choice-label" }, option.label),
      option.description ? h("span", { class: "choice-description muted" }, option.description) : null)))];
  const read = (form) => {
    const picked = [...form.querySelectorAll("input:checked")].map((input) => input.value);
    if (!picked.length) return { error: multiple ? "Choose at least one option." : "Choose an option." };
    return { payload: { answer: multiple ? picked : picked[0] } };
  };
  return { controls, read };
}

const INPUT_TYPES = { text: "text", email: "email", date: "date", number: "number", integer: "number" };

function fieldControl(field) {
  const type = field.type || "text";
  const attrs = { name: field.name, required: field.required === true, placeholder: field.placeholder, "aria-label": field.label };
  if (type === "textarea") return h("textarea", { ...attrs, rows: 3, value: cellText(field.default ?? "") });
  if (type === "boolean") return h("input", { type: "checkbox", name: field.name, checked: field.default === true, "aria-label": field.label });
  if (type === "select") {
    return h("select", attrs, field.required ? null : h("option", { value: "" }, "—"),
      (field.options || []).map((option) => h("option", { value: option, selected: field.default === option }, option)));
  }
  return h("input", { ...attrs, type: INPUT_TYPES[type] || "text", step: type === "integer" ? 1 : type === "number" ? "any" : null,
    min: field.min, max: field.max, value: field.default ?? null });
}

// The form's fields, and read(form) -> {payload: {values}} or {error}.
export function formControls(widget) {
  const fields = widget.fields || [];
  const controls = [
    widget.description ? h("p", { class: "widget-form-description muted" }, cellText(widget.description)) : null,
    h("div", { class: "widget-form-fields" }, fields.map((field) => h("label", { class: `widget-field widget-field-${field.type || "text"}` },
      h("span", { class: "widget-field-label" }, cellText(field.label), field.required ? h("span", { class: "required", title: "required" }, " *") : null),
      fieldControl(field)))),
  ].filter(Boolean);
  const read = (form) => {
    const values = {};
    for (const field of fields) {
      const control = form.elements.namedItem(field.name);
      const type = field.type || "text";
      if (type === "boolean") {
        values[field.name] = control.checked;
        continue;
      }
      const text = control.value.trim();
      if (!text) {
        if (field.required) return { error: `${field.label} is required.` };
        continue;
      }
      if (type === "number" || type === "integer") {
        const number = Number(text);
        if (!Number.isFinite(number) || (type === "integer" && !Number.isInteger(number))) return { error: `${field.label} must be ${type === "integer" ? "a whole number" : "a number"}.` };
        if ((typeof field.min === "number" && number < field.min) || (typeof field.max === "number" && number > field.max)) {
          return { error: `${field.label} must be between ${field.min ?? "-∞"} and ${field.max ?? "∞"}.` };
        }
        values[field.name] = number;
      } else values[field.name] = text;
    }
    return { payload: { values } };
  };
  return { controls, read };
}

// How a widget's answer reads once given.
export function answerText(payload) {
  if (payload && typeof payload.values === "object" && payload.values) {
    const parts = Object.entries(payload.values).map(([key, value]) => `${key}: ${cellText(value)}`);
    return `You answered: ${parts.join(" · ") || "(nothing)"}`;
  }
  return null;
}
