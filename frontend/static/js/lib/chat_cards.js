// A tool call in the conversation, drawn from its model (lib/chat_calls.js): a card that
// appears with the call, fills its argument fields live as patches apply, then shows the
// result or error, hook decisions, pending -> completed for async calls, and the widget a
// suspended call needs (ask_user, submit_plan, approval, client function).

import { CALL_STATUSES, hookVerdict } from "./chat_calls.js";
import { valueNode } from "./chat_render.js";
import { answeredNode, buildWidget } from "./chat_widgets.js";
import { isKnowledgeResult, renderCitations } from "./citations.js";
import { fill, h } from "./dom.js";
import { formatDuration, formatInline, formatJson } from "./format.js";
import { renderWidgetResult } from "./widget_kinds.js";

// Result renderers keyed by the tool's kind: (output) -> Node, or null to show the raw
// value. A tool whose kind is not known to the page is still matched by the `kind` its
// output declares. The label heads the result.
const RESULT_RENDERERS = new Map([["knowledge_search", renderCitations], ["widget", renderWidgetResult]]);
const RESULT_LABELS = new Map([["knowledge_search", "Sources"], ["widget", "Shown to the user"]]);

export function registerResultRenderer(kind, render, label = "Result") {
  RESULT_RENDERERS.set(kind, render);
  RESULT_LABELS.set(kind, label);
}

function resultRenderer(toolKind, output) {
  if (toolKind && RESULT_RENDERERS.has(toolKind)) return RESULT_RENDERERS.get(toolKind);
  if (isKnowledgeResult(output)) return RESULT_RENDERERS.get("knowledge_search");
  return null;
}

export class ToolCard {
  // toolKind: the bound tool's kind (it picks a result renderer); onAnswer(callId,
  // payload) -> promise: sends the answer of a widget.
  constructor(call, { toolKind = null, chatUrl = "/chat/", onAnswer = async () => {} } = {}) {
    this.call = call;
    this.toolKind = toolKind;
    this.chatUrl = chatUrl;
    this.onAnswer = onAnswer;
    this.rows = new Map(); // top-level key -> {row, valueEl, kind}
    this.dirty = new Set();
    this.frame = 0;
    this.liveRow = null;
    this.widget = null; // the widget model drawn last
    const isAgent = call.toolName.startsWith("agent-");
    this.statusEl = h("span", { class: "tool-status" });
    this.rawButton = h("button", { type: "button", class: "tool-raw-toggle", title: "Show the raw argument text" }, "raw");
    this.rawEl = h("pre", { class: "tool-raw", hidden: true });
    this.argsEl = h("dl", { class: "tool-args" });
    this.hooksEl = h("ul", { class: "tool-hooks", hidden: true });
    this.widgetEl = h("div", { class: "tool-widget", hidden: true });
    this.resultEl = h("div", { class: "tool-result", hidden: true });
    this.headEl = h("header", { class: "tool-head" },
      h("span", { class: "tool-icon", "aria-hidden": "true" }, isAgent ? "◆" : "ƒ"),
      h("code", { class: "tool-name" }, call.toolName),
      this.statusEl,
      this.rawButton);
    this.element = h("article", {
      class: `tool-card${isAgent ? " tool-card-agent" : ""}`,
      dataset: { toolCallId: call.id, toolName: call.toolName },
    }, this.headEl, this.argsEl, this.rawEl, this.hooksEl, this.widgetEl, this.resultEl);
    this.rawButton.addEventListener("click", () => {
      this.rawEl.hidden = !this.rawEl.hidden;
      if (!this.rawEl.hidden) this.rawEl.textContent = this.call.raw.join("") || formatJson(this.call.value);
    });
    this.drawStatus();
  }

  // One change record of this call ({aspect, ...}).
  update(change) {
    const draw = {
      status: () => this.drawStatus(),
      raw: () => { if (!this.rawEl.hidden) this.rawEl.append(change.delta); },
      input: () => (change.patches ? change.patches.forEach((patch) => this.touched(patch)) : this.redrawInput()),
      hidden: () => this.drawHidden(),
      hooks: () => this.drawHooks(change.added),
      log: () => this.drawLog(change.data),
      outcome: () => this.drawOutcome(),
      widget: () => this.drawWidget(),
      link: () => this.drawLink(),
    }[change.aspect];
    if (draw) draw();
  }

  drawStatus() {
    const { status, note } = this.call;
    this.element.dataset.status = status;
    this.statusEl.textContent = note || (status === "completed" ? this.completedLabel() : CALL_STATUSES[status] || status);
    this.statusEl.title = (note && this.call.noteDetail) || "";
  }

  completedLabel() {
    const duration = this.call.outcome?.durationMs;
    return `${this.call.wasPending ? "completed (async)" : "completed"}${duration != null ? ` · ${formatDuration(duration)}` : ""}`;
  }

  // --- the input ---------------------------------------------------------------------------
  touched(patch) {
    const path = patch.path || [];
    const value = this.call.value;
    if (!path.length || value === null || typeof value !== "object" || Array.isArray(value)) {
      this.dirty.add("*");
      this.schedule();
      return;
    }
    const key = String(path[0]);
    const known = this.rows.get(key);
    // Fast path: text appended to a top-level string is appended to its field, so a long
    // argument costs the size of each delta, not of the whole value.
    if (patch.op === "append" && path.length === 1 && known && known.kind === "text" && !this.dirty.has(key)) {
      known.valueEl.append(patch.value);
      this.markLive(known);
      return;
    }
    this.dirty.add(key);
    this.schedule();
  }

  markLive(row) {
    if (this.liveRow && this.liveRow !== row) this.liveRow.row.classList.remove("live");
    row.row.classList.add("live");
    this.liveRow = row;
  }

  schedule() {
    if (this.frame) return;
    const run = () => { this.frame = 0; this.flush(); };
    // Coalesce structural redraws per animation frame (a background tab still gets them).
    this.frame = typeof requestAnimationFrame === "function" && document.visibilityState === "visible"
      ? requestAnimationFrame(run) : setTimeout(run, 16);
  }

  // The whole input again, now (the complete input, or a late joiner's partial value).
  redrawInput() {
    this.dirty.add("*");
    this.flush();
    if (this.call.final && this.liveRow) this.liveRow.row.classList.remove("live");
  }

  // Redraws the fields marked dirty (all of them after a root change).
  flush() {
    if (this.call.hidden) return;
    const all = this.dirty.has("*");
    const keys = [...this.dirty];
    this.dirty.clear();
    const value = this.call.value;
    if (value === null || value === undefined || typeof value !== "object" || Array.isArray(value)) {
      this.argsEl.replaceChildren();
      this.rows.clear();
      if (value !== undefined) this.argsEl.append(h("div", { class: "arg arg-root" }, h("dd", { class: "arg-value" }, valueNode(value))));
      return;
    }
    if (all) {
      this.argsEl.replaceChildren();
      this.rows.clear();
      for (const key of Object.keys(value)) this.drawRow(key);
    } else {
      for (const key of keys) this.drawRow(key);
    }
  }

  drawRow(key) {
    const value = this.call.value[key];
    let row = this.rows.get(key);
    if (!row) {
      const valueEl = h("dd", { class: "arg-value" });
      const rowEl = h("div", { class: "arg", dataset: { key } }, h("dt", {}, key), valueEl);
      this.argsEl.append(rowEl);
      row = { row: rowEl, valueEl, kind: null };
      this.rows.set(key, row);
    }
    const scalars = Array.isArray(value) && value.every((item) => item === null || typeof item !== "object");
    row.kind = typeof value === "string" ? "text" : scalars ? "list" : "json";
    row.row.dataset.kind = row.kind;
    if (row.kind === "text") row.valueEl.textContent = value;
    else if (row.kind === "list") fill(row.valueEl, value.map((item) => h("span", { class: "arg-item" }, formatInline(item))));
    else fill(row.valueEl, h("pre", {}, formatJson(value)));
    if (!this.call.final) this.markLive(row);
  }

  drawHidden() {
    this.rows.clear();
    fill(this.argsEl, h("div", { class: "arg arg-root arg-hidden" }, h("dd", {}, "Input hidden: its display transform failed.")));
    this.rawButton.hidden = true;
  }

  // --- what happened -------------------------------------------------------------------
  drawHooks(added) {
    for (const decision of added) {
      const verdict = hookVerdict(decision);
      const detail = decision.reason || decision.message || decision.note || "";
      // A skipping hook's output is the card's result below; it is not repeated here.
      this.hooksEl.append(h("li", { class: `hook ${decision.proceed === false ? "hook-stop" : ""}` },
        h("span", { class: "hook-name" }, decision.hook),
        decision.source ? h("span", { class: "hook-source muted" }, ` (${decision.source})`) : null,
        verdict ? ` ${verdict}` : "",
        detail ? h("span", { class: "muted" }, ` — ${detail}`) : null));
    }
    this.hooksEl.hidden = this.hooksEl.childElementCount === 0;
  }

  drawLog(data) {
    if (!this.logEl) {
      this.logEl = h("ol", { class: "tool-log" });
      this.resultEl.before(this.logEl);
    }
    this.logEl.append(h("li", {}, typeof data === "string" ? data : formatJson(data)));
  }

  drawLink() {
    const { threadId, agent } = this.call.subagent;
    this.headEl.append(h("a", { class: "tool-link", href: `${this.chatUrl}t/${threadId}/`, target: "_blank" },
      `open ${agent || "sub-agent"} thread ↗`));
  }

  drawOutcome() {
    const outcome = this.call.outcome;
    let body;
    if (outcome.kind === "result") {
      const render = outcome.hidden ? null : resultRenderer(this.toolKind, outcome.output);
      const drawn = render ? render(outcome.output) : null;
      const label = drawn ? RESULT_LABELS.get(this.toolKind) || RESULT_LABELS.get("knowledge_search") : "Result";
      body = [h("div", { class: "tool-result-label" }, label),
        outcome.hidden ? h("div", { class: "muted" }, "Output hidden: its display transform failed.")
          : drawn || valueNode(outcome.output)];
      // A drawn widget restates the input: keep the argument fields out of the way.
      this.element.classList.toggle("widget-shown", Boolean(drawn) && this.toolKind === "widget");
      if (outcome.modelOutput !== undefined && JSON.stringify(outcome.modelOutput) !== JSON.stringify(outcome.output)) {
        body.push(h("details", { class: "model-output" }, h("summary", {}, "What the model sees"), valueNode(outcome.modelOutput)));
      }
    } else if (outcome.kind === "error") {
      const { error, errors } = outcome;
      const message = typeof error === "string" ? error : (error && (error.message || error.detail)) || formatJson(error);
      body = [h("div", { class: "tool-result-label" }, "Error"), h("div", { class: "value-text" }, message),
        errors.length ? h("ul", { class: "error-paths" }, errors.map((e) => h("li", {}, h("code", {}, e.path || "$"), ` ${e.message || ""}`))) : null];
    } else {
      if (outcome.output === undefined) return;
      body = [h("div", { class: "tool-result-label" }, "Output given by the hook"), valueNode(outcome.output)];
    }
    fill(this.resultEl, body);
    this.resultEl.className = `tool-result${outcome.kind === "error" ? " tool-result-error" : ""}`;
    this.resultEl.hidden = false;
  }

  drawWidget() {
    const widget = this.call.widget;
    if (widget === this.widget) return;
    this.widget = widget;
    if (!widget) {
      this.widgetEl.replaceChildren();
      this.widgetEl.hidden = true;
      return;
    }
    let node;
    if (widget.kind === "form") {
      node = buildWidget({
        kind: widget.suspendKind, toolName: widget.toolName, payload: widget.payload, input: this.call.value,
        autoResume: widget.autoResume, submit: (answer) => this.onAnswer(this.call.id, answer),
      });
    } else if (widget.kind === "answered") {
      node = answeredNode(widget.suspendKind, widget.payload, widget.question);
    } else {
      node = h("div", { class: `answered${widget.tone ? ` answered-${widget.tone}` : ""}` }, widget.text);
    }
    fill(this.widgetEl, node);
    this.widgetEl.hidden = false;
    // The widget restates the input (the question, the plan): keep the fields to one line,
    // or (a widget tool's choice list or form, which is the whole input) out of the way.
    this.element.classList.add("has-widget");
    if (this.toolKind === "widget") this.element.classList.add("widget-shown");
  }
}
