// A tool call in the conversation: a card that appears at `tool-input-start`, fills its
// argument fields live from the patches of `tool-input-delta`, then shows the result or
// error, hook decisions, pending -> completed for async calls, and the widget a suspended
// call needs (ask_user, submit_plan, approval, client function).

import { applyPatches } from "./patch.js";
import { el, formatJson, valueNode } from "./chat_render.js";
import { formatDuration } from "./format.js";
import { isKnowledgeResult, renderCitations } from "./citations.js";

// Result renderers keyed by the tool's kind: (output) -> Node. A tool whose kind is not
// known to the page is still matched by the `kind` its output declares.
const RESULT_RENDERERS = new Map([["knowledge_search", renderCitations]]);

export function registerResultRenderer(kind, render) {
  RESULT_RENDERERS.set(kind, render);
}

function resultRenderer(toolKind, output) {
  if (toolKind && RESULT_RENDERERS.has(toolKind)) return RESULT_RENDERERS.get(toolKind);
  if (isKnowledgeResult(output)) return RESULT_RENDERERS.get("knowledge_search");
  return null;
}

const STATUS_LABELS = {
  streaming: "generating input",
  running: "running",
  pending: "pending · running in the background",
  suspended: "waiting for you",
  resuming: "resuming",
  completed: "completed",
  failed: "failed",
  skipped: "skipped by a hook",
};

export class ToolCard {
  constructor({ toolCallId, toolName, runId, toolKind }) {
    this.toolCallId = toolCallId;
    this.toolName = toolName || "tool";
    this.toolKind = toolKind || null;
    this.runId = runId;
    this.value = undefined;
    this.rows = new Map(); // top-level key -> {row, valueEl, kind}
    this.dirty = new Set();
    this.frame = 0;
    this.rawChunks = [];
    this.final = false; // the complete input arrived (tool-call)
    this.wasPending = false;
    this.status = null;
    const isAgent = this.toolName.startsWith("agent-");
    this.statusEl = el("span", { class: "tool-status" });
    this.rawButton = el("button", { type: "button", class: "tool-raw-toggle", title: "Show the raw argument text" }, "raw");
    this.rawEl = el("pre", { class: "tool-raw", hidden: true });
    this.argsEl = el("dl", { class: "tool-args" });
    this.hooksEl = el("ul", { class: "tool-hooks", hidden: true });
    this.widgetEl = el("div", { class: "tool-widget", hidden: true });
    this.resultEl = el("div", { class: "tool-result", hidden: true });
    this.element = el("article", {
      class: `tool-card${isAgent ? " tool-card-agent" : ""}`,
      dataset: { toolCallId, toolName: this.toolName },
    },
    el("header", { class: "tool-head" },
      el("span", { class: "tool-icon", "aria-hidden": "true" }, isAgent ? "◆" : "ƒ"),
      el("code", { class: "tool-name" }, this.toolName),
      this.statusEl,
      this.rawButton),
    this.argsEl, this.rawEl, this.hooksEl, this.widgetEl, this.resultEl);
    this.rawButton.addEventListener("click", () => {
      this.rawEl.hidden = !this.rawEl.hidden;
      if (!this.rawEl.hidden) this.rawEl.textContent = this.rawChunks.join("") || formatJson(this.value);
    });
    this.setStatus("streaming");
  }

  setStatus(status, label) {
    this.status = status;
    this.element.dataset.status = status;
    this.statusEl.textContent = label || STATUS_LABELS[status] || status;
  }

  // One tool-input-delta: append the raw text, apply the patches, refresh what changed.
  applyDelta(patches, argsTextDelta) {
    if (argsTextDelta) {
      this.rawChunks.push(argsTextDelta);
      if (!this.rawEl.hidden) this.rawEl.append(argsTextDelta);
    }
    if (!patches || !patches.length || this.final) return;
    this.value = applyPatches(this.value, patches);
    for (const patch of patches) this._touched(patch);
  }

  _touched(patch) {
    const path = patch.path || [];
    if (!path.length || this.value === null || typeof this.value !== "object" || Array.isArray(this.value)) {
      this._scheduleAll();
      return;
    }
    const key = String(path[0]);
    const known = this.rows.get(key);
    // Fast path: text appended to a top-level string is appended to its field, so a long
    // argument costs the size of each delta, not of the whole value.
    if (patch.op === "append" && path.length === 1 && known && known.kind === "text" && !this.dirty.has(key)) {
      known.valueEl.append(patch.value);
      this._markLive(known);
      return;
    }
    this.dirty.add(key);
    this._schedule();
  }

  _markLive(row) {
    if (this.liveRow && this.liveRow !== row) this.liveRow.row.classList.remove("live");
    row.row.classList.add("live");
    this.liveRow = row;
  }

  _scheduleAll() {
    this.dirty.add("*");
    this._schedule();
  }

  _schedule() {
    if (this.frame) return;
    const run = () => { this.frame = 0; this.flush(); };
    // Coalesce structural redraws per animation frame (a background tab still gets them).
    this.frame = typeof requestAnimationFrame === "function" && document.visibilityState === "visible"
      ? requestAnimationFrame(run) : setTimeout(run, 16);
  }

  // Redraws the fields marked dirty (all of them after a root change).
  flush() {
    const all = this.dirty.has("*");
    const keys = [...this.dirty];
    this.dirty.clear();
    const value = this.value;
    if (value === null || value === undefined || typeof value !== "object" || Array.isArray(value)) {
      this.argsEl.replaceChildren();
      this.rows.clear();
      if (value !== undefined) this.argsEl.append(el("div", { class: "arg arg-root" }, el("dd", { class: "arg-value" }, valueNode(value))));
      return;
    }
    if (all) {
      this.argsEl.replaceChildren();
      this.rows.clear();
      for (const key of Object.keys(value)) this._renderRow(key);
    } else {
      for (const key of keys) this._renderRow(key);
    }
  }

  _renderRow(key) {
    const value = this.value[key];
    let row = this.rows.get(key);
    if (!row) {
      const valueEl = el("dd", { class: "arg-value" });
      const rowEl = el("div", { class: "arg", dataset: { key } }, el("dt", {}, key), valueEl);
      this.argsEl.append(rowEl);
      row = { row: rowEl, valueEl, kind: null };
      this.rows.set(key, row);
    }
    const scalars = Array.isArray(value) && value.every((item) => item === null || typeof item !== "object");
    row.kind = typeof value === "string" ? "text" : scalars ? "list" : "json";
    row.row.dataset.kind = row.kind;
    if (row.kind === "text") row.valueEl.textContent = value;
    else if (row.kind === "list") row.valueEl.replaceChildren(...value.map((item) => el("span", { class: "arg-item" }, typeof item === "string" ? item : JSON.stringify(item))));
    else row.valueEl.replaceChildren(el("pre", {}, formatJson(value)));
    if (!this.final) this._markLive(row);
  }

  // The complete, validated input (tool-call): authoritative over the streamed value.
  setInput(input) {
    if (input === undefined) return;
    this.final = true;
    this.value = input;
    this._scheduleAll();
    this.flush();
    if (this.liveRow) this.liveRow.row.classList.remove("live");
  }

  // A late joiner's current partial value (`partial`), then the deltas it had buffered.
  setPartial(value) {
    if (this.final) return;
    this.value = value;
    this._scheduleAll();
    this.flush();
  }

  // Hook decisions come as `tool-hook` events and again in `hookDecisions` lists: each
  // decision is shown once.
  setHooks(decisions) {
    const list = Array.isArray(decisions) ? decisions : decisions ? [decisions] : [];
    this.hookKeys = this.hookKeys || new Set();
    for (const decision of list) {
      const hook = decision.hook || decision.name || "hook";
      const key = JSON.stringify([hook, decision.source, decision.proceed, decision.reason, decision.error, decision.inputChanged, decision.outputChanged]);
      if (this.hookKeys.has(key)) continue;
      this.hookKeys.add(key);
      const proceed = decision.proceed;
      const verdict = decision.decision || hookVerdict(decision);
      const detail = decision.reason || decision.message || decision.note || "";
      const item = el("li", { class: `hook ${proceed === false ? "hook-stop" : ""}` },
        el("span", { class: "hook-name" }, hook),
        decision.source ? el("span", { class: "hook-source muted" }, ` (${decision.source})`) : null,
        verdict ? ` ${verdict}` : "",
        detail ? el("span", { class: "muted" }, ` — ${detail}`) : null);
      // A skipping hook's output is the card's result below; it is not repeated here.
      this.hooksEl.append(item);
    }
    this.hooksEl.hidden = this.hooksEl.childElementCount === 0;
  }

  // A display transform failed: nothing raw may be shown (DESIGN.md section 7).
  setHidden() {
    this.final = true;
    this.value = undefined;
    this.rows.clear();
    this.argsEl.replaceChildren(el("div", { class: "arg arg-root arg-hidden" }, el("dd", {}, "Input hidden: its display transform failed.")));
    this.rawChunks = [];
    this.rawButton.hidden = true;
  }

  addLog(data) {
    if (!this.logEl) {
      this.logEl = el("ol", { class: "tool-log" });
      this.resultEl.before(this.logEl);
    }
    this.logEl.append(el("li", {}, typeof data === "string" ? data : formatJson(data)));
  }

  linkSubagent(href, agent) {
    this.element.querySelector(".tool-head").append(el("a", { class: "tool-link", href, target: "_blank" }, `open ${agent || "sub-agent"} thread ↗`));
  }

  setPending() {
    this.wasPending = true;
    this.setStatus("pending");
  }

  setResult(output, { modelOutput, durationMs, hidden = false } = {}) {
    this.clearWidget();
    const label = `${this.wasPending ? "completed (async)" : "completed"}${durationMs != null ? ` · ${formatDuration(durationMs)}` : ""}`;
    this.setStatus("completed", label);
    const render = hidden ? null : resultRenderer(this.toolKind, output);
    const body = [el("div", { class: "tool-result-label" }, render ? "Sources" : "Result"),
      hidden ? el("div", { class: "muted" }, "Output hidden: its display transform failed.") : render ? render(output) : valueNode(output)];
    if (modelOutput !== undefined && JSON.stringify(modelOutput) !== JSON.stringify(output)) {
      body.push(el("details", { class: "model-output" }, el("summary", {}, "What the model sees"), valueNode(modelOutput)));
    }
    this.resultEl.replaceChildren(...body);
    this.resultEl.className = "tool-result";
    this.resultEl.hidden = false;
  }

  setError(error, { errors } = {}) {
    this.clearWidget();
    this.setStatus("failed");
    const message = typeof error === "string" ? error : (error && (error.message || error.detail)) || formatJson(error);
    const body = [el("div", { class: "tool-result-label" }, "Error"), el("div", { class: "value-text" }, message)];
    if (Array.isArray(errors) && errors.length) {
      body.push(el("ul", { class: "error-paths" }, errors.map((e) => el("li", {}, el("code", {}, e.path || "$"), ` ${e.message || ""}`))));
    }
    this.resultEl.replaceChildren(...body);
    this.resultEl.className = "tool-result tool-result-error";
    this.resultEl.hidden = false;
  }

  setSkipped(output) {
    this.setStatus("skipped");
    if (output !== undefined) {
      this.resultEl.replaceChildren(el("div", { class: "tool-result-label" }, "Output given by the hook"), valueNode(output));
      this.resultEl.className = "tool-result";
      this.resultEl.hidden = false;
    }
  }

  showWidget(node) {
    this.widgetEl.replaceChildren(node);
    this.widgetEl.hidden = false;
    // The widget restates the input (the question, the plan): keep the fields to one line.
    this.element.classList.add("has-widget");
  }

  clearWidget() {
    if (this.widgetEl.querySelector("form:not(.answered)")) this.widgetEl.replaceChildren();
    this.widgetEl.hidden = this.widgetEl.childElementCount === 0;
  }
}

function hookVerdict(decision) {
  if (decision.hook === "after_tool_call") {
    if (decision.error) return `turned the result into an error: ${decision.error}`;
    return decision.outputChanged ? "changed the output" : "kept the output";
  }
  if (decision.proceed === false) return "skipped the call";
  if (decision.inputChanged) return "proceeded with a changed input";
  return decision.proceed === true ? "proceeded" : "";
}
