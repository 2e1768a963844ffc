// The chat's conversation model, built from the thread's event stream and without any DOM:
// user messages, runs (status, text parts, steps, usage), tool calls (lib/chat_calls.js),
// suspended calls and their answers, inline signals and the task list.
//
//   const state = new ChatState({ autoResume, inlineSignals });
//   const changes = state.apply(event);   // what the view must redraw, in order
//
// The history (replayed from /api/threads/<id>/events/) and live events go through the same
// apply(), so a reload shows exactly what a live viewer saw. A sequenced event at or below
// the last seq applied is a duplicate and changes nothing. Events of type "local-*" come
// from the page itself (a message sent, an answer given, a browser function's result).
//
// Change records: {type: "message", message} (added or its status changed), {type: "run",
// run} (a new run), {type: "run-status", run}, {type: "text", run, delta}, {type:
// "segment-end", run, part}, {type: "call", call, aspect, ...} (lib/chat_calls.js),
// {type: "signal", signal, run}, {type: "tasks", tasks}, {type: "composer", error},
// {type: "client-call", call} (a browser function to run), {type: "ask-partial", call} (a
// late card needs the server's partial value: the page sends get-partial).

import * as calls from "./chat_calls.js";
import { formatJson } from "./format.js";

const RUN_ENDED = Object.freeze(["completed", "failed", "aborted", "error"]);

export class ChatState {
  // autoResume: the agent's default for suspended calls; inlineSignals: false when the
  // inbox module draws signals itself.
  constructor({ autoResume = false, inlineSignals = true } = {}) {
    this.autoResume = autoResume;
    this.inlineSignals = inlineSignals;
    this.lastSeq = 0;
    this.messages = []; // {id, text, runId, status: "sending" | "sent" | "failed", local}
    this.timeline = []; // the conversation's top level: {type: "message" | "run" | "signal", ...}
    this.runs = new Map(); // runId -> run
    this.calls = new Map(); // toolCallId -> call (an async result may land in a later run)
    this.suspended = new Map(); // toolCallId -> {runId, kind, autoResume, toolName, payload}
    this.sending = []; // local messages not yet bound to a run
    this.activeRunId = null; // the run that streams or waits
    this.awaitingRun = false; // a message was sent and its run-start has not come yet
    this.tasks = [];
    this.userTextByRun = new Map(); // from /messages/, for run-start events without the text
    this.out = [];
  }

  get activeRun() {
    return this.activeRunId === null ? null : this.runs.get(this.activeRunId) || null;
  }

  apply(event) {
    this.out = [];
    if (event.seq !== undefined && event.seq !== null && event.type !== "partial") {
      if (Number(event.seq) <= this.lastSeq) return this.out;
      this.lastSeq = Number(event.seq);
    }
    const handler = HANDLERS[event.type];
    if (handler) handler.call(this, event);
    return this.out;
  }

  emit(...changes) {
    this.out.push(...changes);
  }

  // --- runs and messages -----------------------------------------------------------------
  addMessage(text, { local = false, runId = null } = {}) {
    const message = { id: `m${this.messages.length + 1}`, text, runId, status: local ? "sending" : "sent", local };
    this.messages.push(message);
    this.timeline.push({ type: "message", id: message.id });
    this.emit({ type: "message", message });
    return message;
  }

  markSending(status, messages = this.sending.splice(0)) {
    for (const message of messages) {
      message.status = status;
      this.emit({ type: "message", message });
    }
  }

  ensureRun(runId) {
    let run = this.runs.get(runId);
    if (run) return run;
    run = { id: runId, status: null, detail: "", steps: 0, usage: null, finish: null, parts: [], segment: null };
    this.runs.set(runId, run);
    this.timeline.push({ type: "run", id: runId });
    this.emit({ type: "run", run });
    return run;
  }

  // A run first seen mid-stream (opened with ?since=): its output means it is running.
  liveRun(runId) {
    const run = this.ensureRun(runId);
    if (run.status === null) this.setRunStatus(run, "running");
    return run;
  }

  setRunStatus(run, status, detail = "") {
    run.status = status;
    run.detail = detail;
    if (status !== "running") this.closeSegment(run);
    if (RUN_ENDED.includes(status) && this.activeRunId === run.id) this.activeRunId = null;
    if (status === "running" || status === "suspended") this.activeRunId = run.id;
    this.emit({ type: "run-status", run });
  }

  closeSegment(run) {
    const part = run.segment;
    if (!part) return;
    run.segment = null;
    part.done = true;
    this.emit({ type: "segment-end", run, part });
  }

  appendText(run, delta) {
    if (!run.segment) {
      run.segment = { type: "text", text: "", done: false };
      run.parts.push(run.segment);
    }
    run.segment.text += delta;
    this.emit({ type: "text", run, delta });
  }

  anySuspended(runId) {
    for (const info of this.suspended.values()) if (info.runId === runId) return true;
    return false;
  }

  // The suspended call the next chat message answers (auto-resume), if any.
  autoResumeTarget() {
    for (const [id, info] of this.suspended) if (info.autoResume && info.kind !== "client") return { id, ...info };
    return null;
  }

  // --- calls -------------------------------------------------------------------------------
  callFor(event) {
    let call = this.calls.get(event.toolCallId);
    if (call) return call;
    const run = this.ensureRun(event.runId);
    this.closeSegment(run);
    call = calls.newCall(event);
    this.calls.set(call.id, call);
    run.parts.push({ type: "call", id: call.id });
    this.emit({ type: "call", call, aspect: "created" });
    return call;
  }

  // A call first seen through a delta (its start was never received): the page asks the
  // server once for its partial value, and the deltas wait until it answers.
  lateCall(event) {
    this.liveRun(event.runId);
    const call = this.callFor(event);
    if (!call.late) call.late = { buffered: [], asked: false };
    return call;
  }

  askPartial(call) {
    if (call.late && !call.late.asked) this.emit({ type: "ask-partial", call });
  }

  // Calls still waiting for a partial value nobody asked for (the page asks on reconnect).
  unaskedLateCalls() {
    return [...this.calls.values()].filter((call) => call.late && !call.late.asked);
  }

  hooks(call, event) {
    this.emit(...calls.addHooks(call, calls.hooksOf(event)));
  }

  // A run that waited only for calls that are now answered runs again.
  wakeRun(runId) {
    const run = this.runs.get(runId);
    if (run && run.status === "suspended" && !this.anySuspended(runId)) this.setRunStatus(run, "running");
  }
}

// One handler per event type, called with the state as `this`.
const HANDLERS = {
  "run-start"(event) {
    this.awaitingRun = false;
    const known = this.runs.has(event.runId);
    const text = event.message ?? event.text ?? event.input ?? this.userTextByRun.get(event.runId);
    if (!known) {
      const local = this.sending.shift();
      if (local) {
        local.runId = event.runId;
        this.markSending("sent", [local]);
      } else if (typeof text === "string" && text) {
        this.addMessage(text, { runId: event.runId });
      }
    } else {
      this.markSending("sent");
    }
    this.setRunStatus(this.ensureRun(event.runId), "running");
  },
  "text-delta"(event) {
    const delta = event.delta ?? event.textDelta ?? event.text ?? "";
    if (delta) this.appendText(this.liveRun(event.runId), delta);
  },
  "tool-input-start"(event) {
    this.liveRun(event.runId);
    const call = this.callFor(event);
    call.late = null; // the start is here: deltas apply directly
    if (event.patches || event.argsTextDelta) this.emit(...calls.applyDelta(call, event.patches, event.argsTextDelta));
  },
  "tool-input-delta"(event) {
    const call = this.calls.get(event.toolCallId) || this.lateCall(event);
    this.askPartial(call);
    if (event.hidden) {
      this.emit(...calls.setHidden(call));
      return;
    }
    if (call.late) {
      call.late.buffered.push(event);
      return;
    }
    // The partial value may hold deltas whose live events arrive after it: skip those.
    if (call.partialAsOf !== null && event.seq !== undefined && Number(event.seq) <= call.partialAsOf) return;
    this.emit(...calls.applyDelta(call, event.patches, event.argsTextDelta));
  },
  "tool-input-end"(event) {
    const call = this.callFor(event);
    if (call.status === "streaming") this.emit(...calls.setStatus(call, "streaming", "input complete"));
  },
  "tool-call"(event) {
    const call = this.callFor(event);
    call.late = null;
    if (event.hidden) this.emit(...calls.setHidden(call));
    else this.emit(...calls.setInput(call, event.input ?? event.args));
    this.hooks(call, event);
    if (call.status === "streaming") this.emit(...calls.setStatus(call, "running"));
  },
  // One hook decision (before_tool_call / after_tool_call) as it happens.
  "tool-hook"(event) {
    this.emit(...calls.addHooks(this.callFor(event), [event]));
  },
  // What a tool wrote through its context's writer while it ran.
  custom(event) {
    const call = event.toolCallId ? this.calls.get(event.toolCallId) : null;
    if (call) this.emit(...calls.addLog(call, event.data));
  },
  // The call waits for a sandbox slot (`note` says why), or runs again (no note).
  "tool-call-waiting"(event) {
    const call = this.callFor(event);
    if (call.status !== "running") return;
    call.noteDetail = event.note || "";
    this.emit(...calls.setStatus(call, "running", event.note ? "waiting for a sandbox slot" : null));
  },
  "tool-call-pending"(event) {
    const call = this.callFor(event);
    this.hooks(call, event);
    this.emit(...calls.setPending(call));
  },
  "tool-result"(event) {
    const call = this.callFor(event);
    this.hooks(call, event);
    this.suspended.delete(call.id);
    const output = event.output ?? event.result;
    if (event.skipped || event.status === "skipped") this.emit(...calls.setSkipped(call, output));
    else if (event.hidden) this.emit(...calls.setResult(call, { hidden: true, durationMs: event.durationMs }));
    else this.emit(...calls.setResult(call, { output, modelOutput: event.modelOutput, durationMs: event.durationMs }));
    if (event.subagent && event.subagent.threadId) this.emit(...calls.linkSubagent(call, event.subagent));
    if (event.runId) this.wakeRun(event.runId);
  },
  "tool-error"(event) {
    const call = this.callFor(event);
    this.hooks(call, event);
    this.suspended.delete(call.id);
    this.emit(...calls.setError(call, { error: event.error ?? event.message, errors: event.errors }));
  },
  "tool-call-suspended"(event) {
    const call = this.callFor(event);
    const payload = event.suspendPayload ?? event.payload ?? {};
    const kind = calls.suspendKind(event.toolName, payload);
    const autoResume = Boolean(event.autoResume ?? payload.autoResume ?? this.autoResume);
    this.suspended.set(call.id, { runId: event.runId, kind, autoResume, toolName: event.toolName, payload });
    const client = kind === "client";
    this.emit(...calls.setStatus(call, "suspended", client ? "running in your browser" : null));
    if (client) {
      const name = calls.clientFunctionName(event.toolName, payload);
      this.emit(...calls.setWidget(call, { kind: "note", text: `Runs the browser function "${name}"…` }));
    } else {
      this.emit(...calls.setWidget(call, { kind: "form", suspendKind: kind, toolName: event.toolName, payload, autoResume }));
    }
    this.setRunStatus(this.ensureRun(event.runId), "suspended", client ? "Waiting for the browser function" : "");
    if (client) this.emit({ type: "client-call", call });
  },
  "tool-call-resumed"(event) {
    this.awaitingRun = false;
    const call = this.callFor(event);
    const info = this.suspended.get(call.id);
    this.suspended.delete(call.id);
    const payload = event.resumePayload ?? event.payload;
    // An answer given elsewhere (another tab, REST, the history) replaces the open widget.
    if (call.widget?.kind === "form" || (payload !== undefined && !call.widget)) {
      this.emit(...calls.setWidget(call, { kind: "answered", suspendKind: info?.kind || "", payload, question: info?.payload }));
    }
    this.emit(...calls.setStatus(call, "running", "resumed"));
    this.markSending("sent");
    const run = this.runs.get(event.runId);
    if (run && !this.anySuspended(event.runId)) this.setRunStatus(run, "running");
  },
  "step-finish"(event) {
    const run = this.ensureRun(event.runId);
    run.steps += 1;
    this.closeSegment(run);
  },
  "run-finish"(event) {
    const run = this.ensureRun(event.runId);
    const status = String(event.status || event.finishReason || "completed").toLowerCase();
    if (event.usage) run.usage = event.usage;
    if (status.includes("suspend") || this.anySuspended(event.runId)) this.setRunStatus(run, "suspended");
    else if (event.finishReason === "superseded") this.setRunStatus(run, "aborted", "Closed: a new message was sent instead of an answer");
    else if (event.finishReason === "stopped") this.setRunStatus(run, "aborted", "Stopped while waiting for an answer");
    else if (status.includes("abort") || status.includes("cancel")) this.setRunStatus(run, "aborted");
    else {
      run.finish = { steps: event.steps ?? null, usage: event.usage ?? null, finishReason: event.finishReason ?? null, model: event.model || null };
      this.setRunStatus(run, "completed");
    }
  },
  "run-error"(event) {
    this.awaitingRun = false;
    const run = this.ensureRun(event.runId);
    const message = event.error?.message ?? event.error ?? event.message ?? "The run failed.";
    const aborted = /abort/i.test(String(event.code || event.reason || ""));
    this.setRunStatus(run, aborted ? "aborted" : "failed", aborted ? "Stopped" : `Run failed: ${message}`);
  },
  "task-list"(event) {
    this.tasks = (event.tasks ?? event.items ?? []).map((task) => ({
      id: task.id,
      title: task.title || task.content || task.name || task.description || String(task.id),
      status: String(task.status || "pending").toLowerCase().replace(/[\s-]/g, "_"),
    }));
    this.emit({ type: "tasks", tasks: this.tasks });
  },
  signal(event) {
    if (!this.inlineSignals) return;
    const run = event.runId ? this.ensureRun(event.runId) : null;
    const signal = {
      type: "signal", runId: event.runId || null, tag: event.tagName || event.signalType || "signal",
      content: event.content ?? event.attributes ?? {},
    };
    if (run) run.parts.push(signal);
    else this.timeline.push(signal);
    this.emit({ type: "signal", signal, run });
  },
  // The server refused a message of ours (not sequenced): say so by the composer.
  error(event) {
    this.awaitingRun = false;
    this.markSending("failed");
    this.emit({ type: "composer", error: event.message || event.detail || event.error || "The server refused the request." });
  },
  partial(event) {
    const call = this.calls.get(event.toolCallId);
    if (!call || !call.late) return;
    this.emit(...calls.setPartial(call, event.value, event.asOf ?? event.seq ?? null));
  },

  // --- from the page ---------------------------------------------------------------------
  "local-message"(event) {
    this.sending.push(this.addMessage(event.text, { local: true }));
    this.awaitingRun = true;
  },
  // The message did not reach the server, or no run started in time.
  "local-send-failed"() {
    this.awaitingRun = false;
    const last = this.sending.pop();
    if (last) this.markSending("failed", [last]);
  },
  "local-await-timeout"() {
    this.awaitingRun = false;
  },
  "local-partial-asked"(event) {
    const call = this.calls.get(event.toolCallId);
    if (call?.late) call.late.asked = true;
  },
  // The user answered a suspended call on this page (the widget, or a browser function).
  "local-resumed"(event) {
    const call = this.calls.get(event.toolCallId);
    if (!call) return;
    if (call.widget?.kind === "form") {
      this.emit(...calls.setWidget(call, { kind: "answered", suspendKind: call.widget.suspendKind, payload: event.payload, question: call.widget.payload }));
    }
    this.emit(...calls.setStatus(call, "resuming"));
  },
  "local-client-result"(event) {
    const call = this.calls.get(event.toolCallId);
    if (!call) return;
    const { name, result } = event;
    const text = result.error ? `Browser function failed: ${result.error}` : `Browser function ${name} returned ${formatJson(result.output)}`;
    this.emit(...calls.setWidget(call, { kind: "note", tone: result.error ? "no" : "ok", text }));
  },
};
