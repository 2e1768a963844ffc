// The model of one tool call in the chat, without any DOM: its streamed input (built from
// the patches of `tool-input-delta`, never by re-parsing the argument text), the raw
// argument text, hook decisions (each shown once), logs, the outcome (result, error or
// skipped), the widget a suspended call shows, and the late-joiner bookkeeping (a card
// first seen through a delta waits for the server's partial value).
//
// Every function changes the call in place and returns the change records the view needs
// ({type: "call", call, aspect, ...}); lib/chat_state.js collects them per event.

import { applyPatches } from "./patch.js";

// What the card shows while in a status, unless the call carries its own note.
export const CALL_STATUSES = Object.freeze({
  streaming: "generating input",
  running: "running",
  pending: "pending · running in the background",
  suspended: "waiting for you",
  resuming: "resuming",
  completed: "completed",
  failed: "failed",
  skipped: "skipped by a hook",
});

export function newCall({ toolCallId, toolName, runId }) {
  return {
    id: toolCallId,
    toolName: toolName || "tool",
    runId,
    status: "streaming",
    note: null, // a label that replaces the status's own ("input complete", "resumed")
    value: undefined, // the input so far (patched), then the complete input
    final: false, // the complete input arrived (tool-call): later patches are ignored
    hidden: false, // a display transform failed: no input may be shown
    raw: [], // the argument text as streamed
    hooks: [],
    logs: [],
    wasPending: false, // ran in the background (tool-call-pending came first)
    outcome: null, // {kind: "result" | "error" | "skipped", ...}
    widget: null, // {kind: "form" | "note" | "answered", ...}
    subagent: null, // {threadId, agent}: the thread a sub-agent call ran in
    late: null, // {buffered: [delta events], asked}: waiting for the partial value
    partialAsOf: null, // the seq the partial value included
  };
}

const change = (call, aspect, extra = {}) => ({ type: "call", call, aspect, ...extra });

export function setStatus(call, status, note = null) {
  call.status = status;
  call.note = note;
  return [change(call, "status")];
}

// One tool-input-delta: the raw text grows, and the patches apply unless the complete
// input is already there.
export function applyDelta(call, patches, argsTextDelta) {
  const out = [];
  if (argsTextDelta) {
    call.raw.push(argsTextDelta);
    out.push(change(call, "raw", { delta: argsTextDelta }));
  }
  if (!patches || !patches.length || call.final) return out;
  call.value = applyPatches(call.value, patches);
  out.push(change(call, "input", { patches }));
  return out;
}

// The complete, validated input (tool-call): authoritative over the streamed value.
export function setInput(call, input) {
  if (input === undefined) return [];
  call.final = true;
  call.value = input;
  return [change(call, "input")];
}

// A late joiner's current partial value, then the buffered deltas newer than it. The view
// redraws the input once, from the value with those deltas applied.
export function setPartial(call, value, asOf) {
  const { buffered } = call.late || { buffered: [] };
  call.late = null;
  if (!call.final) call.value = value;
  const out = [];
  if (asOf !== null && asOf !== undefined) {
    call.partialAsOf = Number(asOf);
    for (const delta of buffered) {
      if (Number(delta.seq) > call.partialAsOf) out.push(...applyDelta(call, delta.patches, delta.argsTextDelta));
    }
  }
  const raw = out.filter((record) => record.aspect === "raw");
  return call.final ? raw : [...raw, change(call, "input")];
}

// A display transform failed: the input (and its raw text) is never shown.
export function setHidden(call) {
  call.final = true;
  call.hidden = true;
  call.value = undefined;
  call.raw = [];
  return [change(call, "hidden")];
}

// The hook decisions an event carries, under any of the names the server uses.
export function hooksOf(event) {
  const hooks = event.hookDecisions || event.hooks || event.hook || null;
  return Array.isArray(hooks) ? hooks : hooks ? [hooks] : [];
}

// Hook decisions come as `tool-hook` events and again in `hookDecisions` lists: each is
// kept once.
export function addHooks(call, decisions) {
  const added = [];
  for (const decision of decisions) {
    const hook = decision.hook || decision.name || "hook";
    const key = JSON.stringify([hook, decision.source, decision.proceed, decision.reason, decision.error,
      decision.inputChanged, decision.outputChanged]);
    if (call.hooks.some((known) => known.key === key)) continue;
    const entry = { ...decision, hook, key };
    call.hooks.push(entry);
    added.push(entry);
  }
  return added.length ? [change(call, "hooks", { added })] : [];
}

// What a hook did, in words.
export function hookVerdict(decision) {
  if (decision.decision) return decision.decision;
  if (decision.hook === "after_tool_call") {
    if (decision.error) return `turned the result into an error: ${decision.error}`;
    return decision.outputChanged ? "changed the output" : "kept the output";
  }
  if (decision.proceed === false) return "skipped the call";
  if (decision.inputChanged) return "proceeded with a changed input";
  return decision.proceed === true ? "proceeded" : "";
}

export function addLog(call, data) {
  call.logs.push(data);
  return [change(call, "log", { data })];
}

export function setPending(call) {
  call.wasPending = true;
  return setStatus(call, "pending");
}

// An open question form goes away once the call has an outcome; an answer stays.
function dropOpenForm(call) {
  if (call.widget?.kind !== "form") return [];
  call.widget = null;
  return [change(call, "widget")];
}

export function setResult(call, { output, modelOutput, durationMs, hidden = false }) {
  const out = dropOpenForm(call);
  call.outcome = { kind: "result", output, modelOutput, durationMs, hidden };
  return [...out, ...setStatus(call, "completed"), change(call, "outcome")];
}

export function setError(call, { error, errors }) {
  const out = dropOpenForm(call);
  call.outcome = { kind: "error", error, errors: Array.isArray(errors) ? errors : [] };
  return [...out, ...setStatus(call, "failed"), change(call, "outcome")];
}

export function setSkipped(call, output) {
  call.outcome = { kind: "skipped", output };
  return [...setStatus(call, "skipped"), change(call, "outcome")];
}

export function setWidget(call, widget) {
  call.widget = widget;
  return [change(call, "widget")];
}

export function linkSubagent(call, subagent) {
  call.subagent = { threadId: subagent.threadId, agent: subagent.agent };
  return [change(call, "link")];
}

// Which widget a suspended call needs, from its tool and suspend payload.
export function suspendKind(toolName, payload) {
  const p = payload && typeof payload === "object" ? payload : {};
  const kind = String(p.kind || p.type || p.reason || "").toLowerCase();
  // tools_app.types: {"kind": "client-function"}, {"kind": "ask-user"}, {"kind": "plan-approval"},
  // {"kind": "widget"} (a widget tool's choice list or form).
  if (kind.includes("client")) return "client";
  if (kind === "widget") return "widget";
  if (kind.includes("plan") || toolName === "submit_plan") return "plan";
  if (kind.includes("ask") || kind.includes("question") || toolName === "ask_user") return "ask";
  if (kind.includes("approv") || p.requiresApproval === true) return "approval";
  if (p.question !== undefined || Array.isArray(p.options)) return "ask";
  if (p.plan !== undefined || Array.isArray(p.steps)) return "plan";
  return "generic";
}

// The name of the browser function a client call runs.
export function clientFunctionName(toolName, payload) {
  return payload.function || payload.functionName || payload.name || toolName;
}
