// The preview chat page (issue 4, "The page"): agent picker and threads on the left, the
// conversation streaming in the middle, tasks / inbox / stream facts on the right.
//
// Everything the conversation shows is built from the thread's event stream, the same
// way for the history (replayed from /api/threads/<id>/events/) and for live events, so
// a reload renders exactly what a live viewer saw. lib/stream.js guarantees each event
// arrives once and in seq order.

import { api, listOf } from "./lib/api.js";
import { ThreadStream, STATES } from "./lib/stream.js";
import { ToolCard } from "./lib/chat_cards.js";
import { buildWidget, suspendKind, answeredNode } from "./lib/chat_widgets.js";
import { el, renderMarkdown, formatJson } from "./lib/chat_render.js";
import { timeAgo } from "./lib/format.js";
import { runClientTool } from "./lib/client_tools.js";

const app = document.getElementById("chat-app");
const $ = (id) => document.getElementById(id);
const conversation = $("conversation");
const input = $("composer-input");
const sendButton = $("send-button");
const stopButton = $("stop-button");
const hint = $("composer-hint");
const HINT_DEFAULT = hint.innerHTML;

const agents = JSON.parse($("chat-agents").textContent);
const state = {
  agent: agents.find((a) => a.slug === app.dataset.agent) || null,
  threadId: app.dataset.thread || null,
  stream: null,
  runs: new Map(), // runId -> run view
  cards: new Map(), // toolCallId -> ToolCard (async results may arrive in a later run)
  suspended: new Map(), // toolCallId -> {runId, kind, autoResume}
  activeRun: null, // the run that streams or waits (null when idle)
  sending: false,
  awaitingRun: false, // a message was sent and its run-start has not come yet
  replaying: false,
  userTextByRun: new Map(), // from /messages/, for run-start events without the text
  localUsers: [], // bubbles sent from this page, bound to the next run-start
  clientDone: new Set(),
  eventCount: 0,
  partialRequests: 0,
  log: [],
};

// Lets other modules (the inbox) follow the stream without touching this file.
function broadcast(event) {
  document.dispatchEvent(new CustomEvent("studio:stream-event", { detail: event }));
}

// --- layout helpers ----------------------------------------------------------------------
function nearBottom() {
  return conversation.scrollHeight - conversation.scrollTop - conversation.clientHeight < 120;
}

function keepScrolled(fn) {
  const stick = state.replaying || nearBottom();
  const result = fn();
  if (stick) conversation.scrollTop = conversation.scrollHeight;
  return result;
}

function hideEmpty() {
  const empty = $("chat-empty");
  if (empty) empty.remove();
}

// --- conversation model -----------------------------------------------------------------
function userBubble(text, { local = false } = {}) {
  hideEmpty();
  const bubble = el("div", { class: `turn turn-user${local ? " is-sending" : ""}` }, el("div", { class: "bubble" }, text));
  conversation.append(bubble);
  return bubble;
}

function ensureRun(runId) {
  let run = state.runs.get(runId);
  if (run) return run;
  hideEmpty();
  const body = el("div", { class: "turn-body" });
  const foot = el("div", { class: "run-foot" });
  const element = el("div", { class: "turn turn-assistant", dataset: { runId: runId || "" } },
    el("div", { class: "avatar", "aria-hidden": "true" }, (state.agent?.name || "A").slice(0, 1).toUpperCase()),
    el("div", { class: "turn-main" }, el("div", { class: "turn-who" }, state.agent?.name || "Agent"), body, foot));
  conversation.append(element);
  run = { id: runId, element, body, foot, segment: null, status: "running", steps: 0 };
  state.runs.set(runId, run);
  return run;
}

// A run first seen mid-stream (opened with ?since=): its output means it is running.
function liveRun(runId) {
  const run = ensureRun(runId);
  if (!run.element.dataset.status) setRunStatus(run, "running");
  return run;
}

function closeSegment(run) {
  const segment = run.segment;
  if (!segment) return;
  run.segment = null;
  segment.element.classList.remove("streaming");
  // Markdown once the segment is complete; while it streams it is plain text.
  if (/[`*#\n[]|^\s*[-\d]/.test(segment.text)) segment.element.replaceChildren(renderMarkdown(segment.text));
}

function appendText(run, delta) {
  if (!run.segment) {
    const element = el("div", { class: "msg-text streaming" });
    run.body.append(element);
    run.segment = { element, text: "" };
  }
  run.segment.text += delta;
  run.segment.element.append(delta);
}

function setRunStatus(run, status, detail = "") {
  run.status = status;
  run.element.dataset.status = status;
  const labels = {
    running: "", suspended: "Waiting for your answer", completed: "",
    failed: "Run failed", aborted: "Stopped", error: "Run failed",
  };
  const text = detail || labels[status] || "";
  run.foot.replaceChildren();
  if (text) run.foot.append(el("span", { class: `run-note run-note-${status}` }, text));
  if (status !== "running") closeSegment(run);
  if (["completed", "failed", "aborted", "error"].includes(status) && state.activeRun === run) state.activeRun = null;
  if (status === "running" || status === "suspended") state.activeRun = run;
  updateComposer();
}

function cardFor(event, { create = true } = {}) {
  const id = event.toolCallId;
  let card = state.cards.get(id);
  if (card || !create) return card;
  const run = ensureRun(event.runId);
  closeSegment(run);
  const toolKind = (state.agent?.toolKinds || {})[event.toolName];
  card = new ToolCard({ toolCallId: id, toolName: event.toolName, runId: event.runId, toolKind });
  state.cards.set(id, card);
  run.body.append(card.element);
  return card;
}

// A card first seen through a delta (its start was never received): ask the server once
// for the current partial value, and hold the deltas until it answers.
function lateCard(event) {
  liveRun(event.runId);
  const card = cardFor(event);
  if (!card.late) {
    card.late = { buffered: [], asked: false };
    askPartial(card);
  }
  return card;
}

function askPartial(card) {
  if (!card.late || card.late.asked) return;
  card.late.asked = state.stream?.send({ type: "get-partial", toolCallId: card.toolCallId }) || false;
  if (card.late.asked) state.partialRequests += 1;
}

function hooksOf(event) {
  return event.hookDecisions || event.hooks || event.hook || null;
}

// --- event reducer ------------------------------------------------------------------------
const handlers = {
  "run-start"(event) {
    state.awaitingRun = false;
    const known = state.runs.has(event.runId);
    const text = event.message ?? event.text ?? event.input ?? state.userTextByRun.get(event.runId);
    if (!known) {
      const local = state.localUsers.shift();
      if (local) local.classList.remove("is-sending");
      else if (typeof text === "string" && text) userBubble(text);
    } else {
      state.localUsers.splice(0).forEach((bubble) => bubble.classList.remove("is-sending"));
    }
    setRunStatus(ensureRun(event.runId), "running");
  },
  "text-delta"(event) {
    const delta = event.delta ?? event.textDelta ?? event.text ?? "";
    if (delta) appendText(liveRun(event.runId), delta);
  },
  "tool-input-start"(event) {
    liveRun(event.runId);
    const card = cardFor(event);
    card.late = null; // the start is here: deltas apply directly
    if (event.patches || event.argsTextDelta) card.applyDelta(event.patches, event.argsTextDelta);
  },
  "tool-input-delta"(event) {
    const card = state.cards.get(event.toolCallId) || lateCard(event);
    if (event.hidden) {
      card.setHidden();
      return;
    }
    if (card.late) {
      card.late.buffered.push(event);
      askPartial(card);
      return;
    }
    // The partial value may hold deltas whose live events arrive after it: skip those.
    if (card.partialAsOf !== undefined && event.seq !== undefined && Number(event.seq) <= card.partialAsOf) {
      return;
    }
    card.applyDelta(event.patches, event.argsTextDelta);
  },
  "tool-input-end"(event) {
    const card = cardFor(event);
    if (card.status === "streaming") card.setStatus("streaming", "input complete");
  },
  "tool-call"(event) {
    const card = cardFor(event);
    card.late = null;
    if (event.hidden) card.setHidden();
    else card.setInput(event.input ?? event.args);
    if (hooksOf(event)) card.setHooks(hooksOf(event));
    if (card.status === "streaming") card.setStatus("running");
  },
  // One hook decision (before_tool_call / after_tool_call) as it happens.
  "tool-hook"(event) {
    cardFor(event).setHooks([event]);
  },
  // What a tool wrote through its context's writer while it ran.
  custom(event) {
    const card = event.toolCallId ? state.cards.get(event.toolCallId) : null;
    if (card) card.addLog(event.data);
  },
  "tool-call-pending"(event) {
    const card = cardFor(event);
    if (hooksOf(event)) card.setHooks(hooksOf(event));
    card.setPending();
  },
  "tool-result"(event) {
    const card = cardFor(event);
    if (hooksOf(event)) card.setHooks(hooksOf(event));
    state.suspended.delete(event.toolCallId);
    if (event.skipped || event.status === "skipped") card.setSkipped(event.output ?? event.result);
    else if (event.hidden) card.setResult(undefined, { hidden: true, durationMs: event.durationMs });
    else card.setResult(event.output ?? event.result, { modelOutput: event.modelOutput, durationMs: event.durationMs });
    if (event.subagent && event.subagent.threadId) card.linkSubagent(`${app.dataset.chatUrl}t/${event.subagent.threadId}/`, event.subagent.agent);
    if (event.runId && state.runs.has(event.runId) && state.runs.get(event.runId).status === "suspended" && !anySuspended(event.runId)) {
      setRunStatus(state.runs.get(event.runId), "running");
    }
  },
  "tool-error"(event) {
    const card = cardFor(event);
    if (hooksOf(event)) card.setHooks(hooksOf(event));
    state.suspended.delete(event.toolCallId);
    card.setError(event.error ?? event.message, { errors: event.errors });
  },
  "tool-call-suspended"(event) {
    const card = cardFor(event);
    const payload = event.suspendPayload ?? event.payload ?? {};
    const kind = suspendKind(event.toolName, payload);
    const autoResume = Boolean(event.autoResume ?? payload.autoResume ?? state.agent?.defaultOptions?.autoResume);
    state.suspended.set(event.toolCallId, { runId: event.runId, kind, autoResume, toolName: event.toolName, payload });
    card.setStatus("suspended", kind === "client" ? "running in your browser" : undefined);
    if (kind === "client") {
      card.showWidget(el("div", { class: "answered" }, `Runs the browser function "${clientFunctionName(event, payload)}"…`));
      if (!state.replaying) runClientCall(event.toolCallId);
    } else {
      card.showWidget(buildWidget({
        kind, toolName: event.toolName, payload, input: card.value, autoResume,
        submit: (answer) => resume(event.toolCallId, answer),
      }));
    }
    setRunStatus(ensureRun(event.runId), "suspended", kind === "client" ? "Waiting for the browser function" : "");
  },
  "tool-call-resumed"(event) {
    state.awaitingRun = false;
    const card = cardFor(event);
    const info = state.suspended.get(event.toolCallId);
    state.suspended.delete(event.toolCallId);
    const payload = event.resumePayload ?? event.payload;
    // An answer given elsewhere (another tab, REST, the history) replaces the open widget.
    if (card.widgetEl.querySelector("form") || (payload !== undefined && !card.widgetEl.querySelector(".answered"))) {
      card.showWidget(answeredNode(info ? `widget-${info.kind}` : "", payload));
    }
    card.setStatus("running", "resumed");
    state.localUsers.splice(0).forEach((bubble) => bubble.classList.remove("is-sending"));
    const run = state.runs.get(event.runId);
    if (run && !anySuspended(event.runId)) setRunStatus(run, "running");
  },
  "step-finish"(event) {
    const run = ensureRun(event.runId);
    run.steps += 1;
    closeSegment(run);
  },
  "run-finish"(event) {
    const run = ensureRun(event.runId);
    const status = String(event.status || event.finishReason || "completed").toLowerCase();
    if (status.includes("suspend") || anySuspended(event.runId)) setRunStatus(run, "suspended");
    else if (event.finishReason === "superseded") setRunStatus(run, "aborted", "Closed: a new message was sent instead of an answer");
    else if (status.includes("abort") || status.includes("cancel")) setRunStatus(run, "aborted");
    else {
      setRunStatus(run, "completed");
      // What a developer wants to know about a finished run, small and out of the way.
      const facts = [];
      if (event.steps) facts.push(`${event.steps} step${event.steps === 1 ? "" : "s"}`);
      if (event.usage && event.usage.total_tokens) facts.push(`${event.usage.total_tokens} tokens`);
      if (event.finishReason && !["stop", "tool-calls"].includes(event.finishReason)) facts.push(`finished: ${event.finishReason}`);
      if (facts.length) run.foot.append(el("span", { class: "run-facts-line muted" }, facts.join(" · ")));
    }
  },
  "run-error"(event) {
    state.awaitingRun = false;
    const run = ensureRun(event.runId);
    const message = event.error?.message ?? event.error ?? event.message ?? "The run failed.";
    const aborted = /abort/i.test(String(event.code || event.reason || ""));
    setRunStatus(run, aborted ? "aborted" : "failed", aborted ? "Stopped" : `Run failed: ${message}`);
  },
  "task-list"(event) {
    renderTasks(event.tasks ?? event.items ?? []);
  },
  signal(event) {
    // lib/inbox.js draws signals (with their attributes) when it is on the page.
    if ($("inbox-panel")?.dataset.module) return;
    const run = event.runId ? ensureRun(event.runId) : null;
    const note = el("div", { class: "signal-line" }, el("span", { class: "signal-tag" }, event.tagName || event.signalType || "signal"),
      " ", typeof event.content === "string" ? event.content : formatJson(event.content ?? event.attributes ?? {}));
    (run ? run.body : conversation).append(note);
  },
  // The server refused a message of ours (not sequenced): say so by the composer.
  error(event) {
    state.awaitingRun = false;
    state.localUsers.splice(0).forEach((bubble) => bubble.classList.add("is-failed"));
    updateComposer();
    showComposerError(event.message || event.detail || event.error || "The server refused the request.");
  },
  partial(event) {
    const card = state.cards.get(event.toolCallId);
    if (!card || !card.late) return;
    const { buffered } = card.late;
    card.late = null;
    card.setPartial(event.value);
    // Deltas newer than what the partial value already holds still apply.
    const asOf = event.asOf ?? event.seq ?? null;
    if (asOf === null) return;
    card.partialAsOf = Number(asOf);
    for (const delta of buffered) if (Number(delta.seq) > card.partialAsOf) card.applyDelta(delta.patches, delta.argsTextDelta);
  },
};

function anySuspended(runId) {
  for (const info of state.suspended.values()) if (info.runId === runId) return true;
  return false;
}

// Run state changes show in the thread list (running / waiting for you).
const THREAD_LIST_EVENTS = new Set(["run-start", "run-finish", "run-error", "tool-call-suspended"]);
let threadRefresh = 0;

function handleEvent(event) {
  state.eventCount += 1;
  logEvent(event);
  const handler = handlers[event.type];
  if (handler) keepScrolled(() => handler(event));
  if (!state.replaying && THREAD_LIST_EVENTS.has(event.type)) {
    clearTimeout(threadRefresh);
    threadRefresh = setTimeout(loadThreads, 300);
  }
  broadcast(event);
}

// --- actions -----------------------------------------------------------------------------
function clientFunctionName(event, payload) {
  return payload.function || payload.functionName || payload.name || event.toolName;
}

async function runClientCall(toolCallId) {
  const info = state.suspended.get(toolCallId);
  if (!info || info.kind !== "client" || state.clientDone.has(toolCallId)) return;
  state.clientDone.add(toolCallId);
  const card = state.cards.get(toolCallId);
  const name = clientFunctionName({ toolName: info.toolName }, info.payload);
  const result = await runClientTool(name, info.payload.input ?? card?.value ?? {}, { toolCallId, threadId: state.threadId });
  const message = { type: "client-tool-result", toolCallId, ...result };
  if (!state.stream?.send(message)) {
    // No socket right now: hand it to the server through the resume endpoint instead.
    // The run reads a client function's answer as {output} or {error} (runtime/loop.py).
    await api(`/api/runs/${info.runId}/resume`, { method: "POST", body: { toolCallId, payload: result } });
  }
  card?.showWidget(el("div", { class: `answered ${result.error ? "answered-no" : "answered-ok"}` },
    result.error ? `Browser function failed: ${result.error}` : `Browser function ${name} returned ${formatJson(result.output)}`));
}

async function resume(toolCallId, payload) {
  const info = state.suspended.get(toolCallId);
  if (!state.stream?.send({ type: "resume", toolCallId, payload })) {
    if (!info) throw new Error("this call is no longer waiting");
    await api(`/api/runs/${info.runId}/resume`, { method: "POST", body: { toolCallId, payload } });
  }
  const card = state.cards.get(toolCallId);
  card?.setStatus("resuming");
}

function runOptions() {
  const options = {};
  const choice = $("opt-tool-choice").value;
  const steps = parseInt($("opt-max-steps").value, 10);
  if (choice) options.toolChoice = choice;
  if (steps > 0) options.maxSteps = steps;
  return options;
}

async function sendMessage(text) {
  if (!state.agent || state.sending) return;
  let failure = "";
  state.sending = true;
  updateComposer();
  try {
    if (!state.threadId) {
      const thread = await api("/api/threads/", { method: "POST", body: { agent: state.agent.slug, title: text.slice(0, 80) } });
      await openThread(thread.id, { fresh: true });
      history.pushState({}, "", `${app.dataset.chatUrl}t/${thread.id}/`);
      $("chat-title").textContent = thread.title || text.slice(0, 80);
      loadThreads();
    }
    const bubble = userBubble(text, { local: true });
    state.localUsers.push(bubble);
    conversation.scrollTop = conversation.scrollHeight;
    const options = runOptions();
    state.awaitingRun = true;
    clearTimeout(state.awaitTimer);
    // Never lock the composer for good: if no run starts, say so and let the user retry.
    state.awaitTimer = setTimeout(() => {
      if (!state.awaitingRun) return;
      state.awaitingRun = false;
      updateComposer();
      showComposerError("No run started yet: the message may not have reached the server. Try again.");
    }, 20000);
    if (!state.stream.send({ type: "chat", text, options })) {
      await api(`/api/threads/${state.threadId}/runs/`, { method: "POST", body: { message: text, options } });
    }
    input.value = "";
    autosize();
  } catch (error) {
    state.awaitingRun = false;
    state.localUsers.pop()?.classList.add("is-failed");
    failure = `Could not send: ${error.message}`;
  } finally {
    state.sending = false;
    updateComposer();
    // After updateComposer, which writes the default hint.
    if (failure) showComposerError(failure);
  }
}

async function abortRun() {
  const run = state.activeRun;
  if (!run) return;
  stopButton.disabled = true;
  try {
    if (!state.stream?.send({ type: "abort" })) await api(`/api/runs/${run.id}/abort`, { method: "POST", body: {} });
  } catch (error) {
    showComposerError(`Could not stop the run: ${error.message}`);
  } finally {
    stopButton.disabled = false;
  }
}

// --- composer ----------------------------------------------------------------------------
function autoResumeTarget() {
  for (const [id, info] of state.suspended) if (info.autoResume && info.kind !== "client") return { id, ...info };
  return null;
}

function updateComposer() {
  const run = state.activeRun;
  const streaming = run && run.status === "running";
  const suspended = run && run.status === "suspended";
  const autoResume = suspended && autoResumeTarget();
  const enabled = Boolean(state.agent) && !state.sending && !state.awaitingRun && (!run || Boolean(autoResume));
  input.disabled = !enabled;
  sendButton.disabled = !enabled;
  stopButton.hidden = !run;
  app.dataset.run = run ? run.status : "idle";
  const pill = $("run-pill");
  pill.hidden = !run;
  pill.dataset.state = run ? run.status : "idle";
  pill.textContent = streaming ? "streaming" : suspended ? "waiting for you" : "";
  if (!state.agent) hint.textContent = "Choose an agent to start.";
  else if (streaming) hint.textContent = "The agent is working… Stop ends the run and keeps what it produced.";
  else if (autoResume) hint.textContent = `Auto-resume: your next message answers ${autoResume.toolName}.`;
  else if (suspended) hint.textContent = "Answer the call above to continue, or stop the run.";
  else hint.innerHTML = HINT_DEFAULT;
  if (enabled && document.activeElement === document.body) input.focus();
}

function showComposerError(message) {
  hint.replaceChildren(el("span", { class: "error" }, message));
}

function autosize() {
  input.style.height = "auto";
  input.style.height = `${Math.min(input.scrollHeight, 240)}px`;
}

// --- side panels -------------------------------------------------------------------------
function renderTasks(tasks) {
  const list = $("task-list");
  $("task-count").textContent = tasks.length ? `${tasks.filter((t) => /complete|done/.test(t.status)).length}/${tasks.length}` : "";
  if (!tasks.length) {
    list.replaceChildren(el("li", { class: "empty" }, "The agent has no task list yet."));
    return;
  }
  list.replaceChildren(...tasks.map((task) => {
    const status = String(task.status || "pending").toLowerCase().replace(/[\s-]/g, "_");
    return el("li", { class: `task task-${status}`, dataset: { status } },
      el("span", { class: "task-mark", "aria-hidden": "true" }, status.includes("complete") || status === "done" ? "✓" : status === "in_progress" ? "●" : "○"),
      el("span", { class: "task-title" }, task.title || task.content || task.name || task.description || String(task.id)),
      status === "in_progress" ? el("span", { class: "task-badge" }, "in progress") : null);
  }));
}

function logEvent(event) {
  if (event.seq !== undefined) $("fact-seq").textContent = `#${event.seq}`;
  $("fact-events").textContent = String(state.eventCount);
  const summary = `${event.seq ?? "·"} ${event.type}${event.toolName ? ` ${event.toolName}` : ""}`;
  state.log.push(summary);
  if (state.log.length > 200) state.log.shift();
  const details = document.querySelector(".event-log");
  if (details.open) renderLog();
}

function renderLog() {
  $("event-log").replaceChildren(...state.log.slice(-80).reverse().map((line) => el("li", {}, line)));
}
document.querySelector(".event-log").addEventListener("toggle", renderLog);

function setConnection(status, detail) {
  const pill = $("conn-pill");
  pill.dataset.state = status;
  const labels = {
    [STATES.CONNECTING]: "connecting…", [STATES.OPEN]: "live", [STATES.CLOSED]: "offline", [STATES.IDLE]: "offline",
    [STATES.RECONNECTING]: detail.delay ? `reconnecting in ${Math.ceil(detail.delay / 1000)} s` : "reconnecting…",
  };
  pill.textContent = labels[status] || status;
  if (state.stream) {
    $("fact-reconnects").textContent = String(state.stream.stats.reconnects);
    $("fact-gaps").textContent = String(state.stream.stats.gaps);
  }
  if (status === STATES.OPEN) for (const card of state.cards.values()) askPartial(card);
}

// --- agents and threads ------------------------------------------------------------------
function renderAgent() {
  const summary = $("agent-summary");
  const agent = state.agent;
  $("new-thread").disabled = !agent;
  if (!agent) {
    summary.hidden = true;
    return;
  }
  summary.hidden = false;
  summary.replaceChildren(
    el("div", { class: "agent-line" }, el("strong", {}, agent.name),
      el("span", { class: `badge badge-${agent.source}` }, agent.source === "code" ? "Code" : "Studio")),
    el("code", { class: "muted agent-model" }, agent.model),
    agent.description ? el("p", { class: "muted" }, agent.description) : "",
    el("ul", { class: "chips" }, [...agent.tools, ...agent.subagents].map((name) => el("li", { class: `chip${name.startsWith("agent-") ? " chip-agent" : ""}` }, name))));
  $("chat-subtitle").textContent = `${agent.name} · ${agent.model}`;
}

function threadAgentSlug(thread) {
  const agent = thread.agent;
  return typeof agent === "object" && agent ? agent.slug : agent;
}

async function loadThreads() {
  const list = $("thread-list");
  if (!state.agent) {
    list.replaceChildren(el("li", { class: "empty" }, "Pick an agent to see its threads."));
    return;
  }
  try {
    const data = await api(`/api/threads/?agent=${encodeURIComponent(state.agent.slug)}`);
    const threads = listOf(data).filter((t) => !threadAgentSlug(t) || threadAgentSlug(t) === state.agent.slug || threadAgentSlug(t) === state.agent.id);
    $("thread-count").textContent = String(threads.length);
    if (!threads.length) {
      list.replaceChildren(el("li", { class: "empty" }, "No threads yet: send a message to start one."));
      return;
    }
    list.replaceChildren(...threads.map((thread) => el("li", { class: `thread-item${thread.id === state.threadId ? " active" : ""}`, dataset: { threadId: thread.id } },
      el("a", { href: `${app.dataset.chatUrl}t/${thread.id}/` },
        el("span", { class: "thread-title" }, thread.title || "Untitled chat"),
        el("span", { class: "thread-meta muted" },
          timeAgo(thread.updated_at || thread.updatedAt || thread.created_at),
          thread.activeRun ? el("span", { class: `thread-state thread-state-${thread.activeRun.status}` },
            thread.activeRun.status === "suspended" ? "waiting for you" : "running") : "")))));
  } catch (error) {
    const reason = error.status ? `HTTP ${error.status}` : error.message;
    list.replaceChildren(el("li", { class: "error" }, `Threads could not be loaded (${reason}).`));
  }
}

async function loadUserMessages(threadId) {
  try {
    const messages = listOf(await api(`/api/threads/${threadId}/messages/`));
    for (const message of messages) {
      const run = message.run ?? message.runId ?? message.run_id;
      if (message.role !== "user" || !run || state.userTextByRun.has(run)) continue;
      const parts = Array.isArray(message.parts) ? message.parts : [];
      const text = parts.filter((p) => p.type === "text").map((p) => p.text).join("") || message.text || message.content || "";
      state.userTextByRun.set(run, text);
    }
  } catch (error) {
    console.warn("chat: messages could not be loaded", error);
  }
}

async function openThread(threadId, { fresh = false } = {}) {
  state.threadId = threadId;
  app.dataset.thread = threadId;
  const scheme = location.protocol === "https:" ? "wss" : "ws";
  // `?since=<seq>` opens a long thread at that event (a deep link, or a thread too long
  // to replay): cards whose input started earlier are "late" and ask for their partial value.
  const since = fresh ? 0 : Math.max(0, parseInt(new URLSearchParams(location.search).get("since") || "0", 10) || 0);
  if (since > 1) {
    hideEmpty();
    conversation.append(el("div", { class: "since-banner" }, `Showing the conversation from event #${since}. `,
      el("a", { href: location.pathname }, "Show all of it")));
  }
  state.stream = new ThreadStream({
    wsUrl: `${scheme}://${location.host}/ws/threads/${threadId}/`,
    eventsUrl: `/api/threads/${threadId}/events/`,
    after: since > 1 ? since - 1 : 0,
    onEvent: handleEvent,
    onState: setConnection,
    onGap: () => { $("fact-gaps").textContent = String(state.stream.stats.gaps); },
  });
  // For the console and the browser tests.
  window.chatStream = state.stream;
  window.chatDebug = { get partialRequests() { return state.partialRequests; } };
  // Before the history replays, so that the inbox sees every event in order.
  await mountInbox();
  if (!fresh) {
    state.replaying = true;
    await loadUserMessages(threadId);
    try {
      await state.stream.catchUp();
    } catch (error) {
      console.warn("chat: history could not be loaded over REST; the socket replays it", error);
    }
    state.replaying = false;
    conversation.scrollTop = conversation.scrollHeight;
    // Client functions still waiting after the history run now, once.
    for (const [id, info] of state.suspended) if (info.kind === "client") runClientCall(id);
  }
  state.stream.connect();
  updateComposer();
}

let inboxMounted = false;
async function mountInbox() {
  const panel = $("inbox-panel");
  if (inboxMounted || !panel.dataset.module || !state.threadId) return;
  inboxMounted = true;
  try {
    const module = await import(panel.dataset.module);
    if (typeof module.mountInbox === "function") {
      module.mountInbox($("inbox-body"), {
        threadId: state.threadId,
        onEvent: (fn) => document.addEventListener("studio:stream-event", (e) => fn(e.detail)),
      });
    }
  } catch (error) {
    console.warn("chat: inbox module failed to load", error);
  }
}

// --- wiring ------------------------------------------------------------------------------
$("agent-picker").addEventListener("change", (event) => {
  const slug = event.target.value;
  location.href = slug ? `${app.dataset.chatUrl}${encodeURIComponent(slug)}/` : app.dataset.chatUrl;
});
$("new-thread").addEventListener("click", () => {
  if (state.agent) location.href = `${app.dataset.chatUrl}${encodeURIComponent(state.agent.slug)}/`;
});
$("composer").addEventListener("submit", (event) => {
  event.preventDefault();
  const text = input.value.trim();
  if (text && !input.disabled) sendMessage(text);
});
input.addEventListener("keydown", (event) => {
  if (event.key === "Enter" && !event.shiftKey && !event.isComposing) {
    event.preventDefault();
    $("composer").requestSubmit();
  }
});
input.addEventListener("input", autosize);
stopButton.addEventListener("click", abortRun);
$("conn-pill").addEventListener("click", () => {
  if (state.stream && state.stream.state === STATES.RECONNECTING) state.stream.connect();
});

// The empty conversation: agent cards to pick from, or prompts that exercise the agent's tools.
function renderEmpty() {
  const empty = $("chat-empty");
  if (!empty) return;
  if (!state.agent) {
    empty.replaceChildren(el("h2", {}, "Pick an agent to talk to"),
      el("p", { class: "muted" }, "Code-defined and studio-defined agents both work here."),
      el("div", { class: "agent-grid" }, agents.map((agent) => el("a", { class: "agent-tile", href: `${app.dataset.chatUrl}${encodeURIComponent(agent.slug)}/` },
        el("strong", {}, agent.name), el("span", { class: `badge badge-${agent.source}` }, agent.source === "code" ? "Code" : "Studio"),
        el("span", { class: "muted" }, agent.description || agent.model)))));
    return;
  }
  const prompts = [];
  for (const name of state.agent.tools) {
    if (name === "ask_user") prompts.push("Ask me which city to check, options: Paris, Tokyo or Sydney");
    else if (name === "submit_plan") prompts.push("Make a plan to compare the weather of three cities");
    else if (/convert/.test(name)) prompts.push(`Use ${name} to convert 10 km to mi`);
    else if (/weather|city|lookup/.test(name)) prompts.push(`Use ${name} for Paris`);
    else if (!name.startsWith("task_")) prompts.push(`Use ${name}`);
  }
  for (const name of state.agent.subagents) prompts.push(`Ask the ${name.slice("agent-".length)} about the weather in Tokyo`);
  empty.replaceChildren(el("h2", {}, `Chat with ${state.agent.name}`),
    el("p", { class: "muted" }, "Text streams in as the model writes it; each tool call shows its arguments while they are generated, then its result."),
    prompts.length ? el("div", { class: "prompt-list" }, prompts.slice(0, 4).map((prompt) => el("button", {
      type: "button", class: "prompt-chip",
      onclick: () => { input.value = prompt; autosize(); input.focus(); },
    }, prompt))) : "");
}

renderAgent();
renderEmpty();
loadThreads();
if (state.threadId) openThread(state.threadId);
updateComposer();
