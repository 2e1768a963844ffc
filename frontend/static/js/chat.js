// The preview chat page: agent picker and threads on the left, the conversation streaming
// in the middle, tasks / inbox / stream facts on the right.
//
// The conversation is a model built from the thread's event stream (lib/chat_state.js), the
// same way for the history (replayed from /api/threads/<id>/events/) and for live events,
// so a reload shows exactly what a live viewer saw; lib/stream.js hands over each event
// once and in seq order, and lib/chat_view.js draws what each event changed. This module
// wires them to the page: sending, stopping, answering, browser functions, the composer.

import { api, listOf } from "./lib/api.js";
import { clientFunctionName } from "./lib/chat_calls.js";
import { mountSideToggle, mountTitle } from "./lib/chat_chrome.js";
import { EventLog, renderAgent, renderEmpty, renderTasks, renderThreads } from "./lib/chat_panels.js";
import { ChatState } from "./lib/chat_state.js";
import { ChatView } from "./lib/chat_view.js";
import { runClientTool } from "./lib/client_tools.js";
import { h } from "./lib/dom.js";
import { ThreadStream, STATES } from "./lib/stream.js";

const app = document.getElementById("chat-app");
const $ = (id) => document.getElementById(id);
const conversation = $("conversation");
const input = $("composer-input");
const sendButton = $("send-button");
const stopButton = $("stop-button");
const hint = $("composer-hint");
const HINT_DEFAULT = [...hint.childNodes].map((node) => node.cloneNode(true));
const chatUrl = app.dataset.chatUrl;

const agents = JSON.parse($("chat-agents").textContent);
const agent = agents.find((a) => a.slug === app.dataset.agent) || null;
const state = {
  threadId: app.dataset.thread || null,
  stream: null,
  sending: false,
  replaying: false,
  awaitTimer: 0,
  clientDone: new Set(),
  partialRequests: 0,
};
// lib/inbox.js draws signals (with their attributes) when it is on the page.
const chat = new ChatState({
  autoResume: Boolean(agent?.defaultOptions?.autoResume),
  inlineSignals: !$("inbox-panel")?.dataset.module,
});
const view = new ChatView(conversation, {
  agentName: agent?.name || "Agent", toolKinds: agent?.toolKinds || {}, chatUrl, onAnswer: resume,
});
const eventLog = new EventLog();

// Lets other modules (the inbox) follow the stream without touching this file.
function broadcast(event) {
  document.dispatchEvent(new CustomEvent("studio:stream-event", { detail: event }));
}

function nearBottom() {
  return conversation.scrollHeight - conversation.scrollTop - conversation.clientHeight < 120;
}

function keepScrolled(fn) {
  const stick = state.replaying || nearBottom();
  const result = fn();
  if (stick) conversation.scrollTop = conversation.scrollHeight;
  return result;
}

// --- events --------------------------------------------------------------------------------
// Run state changes show in the thread list (running / waiting for you), and so does the
// title the model gives the thread after its first exchange (`thread-updated`).
const THREAD_LIST_EVENTS = new Set(["run-start", "run-finish", "run-error", "tool-call-suspended", "thread-updated"]);
let threadRefresh = 0;

function handleEvent(event) {
  eventLog.add(event);
  keepScrolled(() => applyEvent(event));
  if (event.type === "thread-updated" && event.title) $("chat-title").textContent = event.title;
  if (!state.replaying && THREAD_LIST_EVENTS.has(event.type)) {
    clearTimeout(threadRefresh);
    threadRefresh = setTimeout(loadThreads, 300);
  }
  broadcast(event);
}

// Applies a stream event (or one of the page's own) to the model and draws what changed.
function applyEvent(event) {
  const changes = chat.apply(event);
  view.render(changes);
  let composer = false;
  for (const change of changes) {
    if (change.type === "run-status") composer = true;
    else if (change.type === "tasks") renderTasks(change.tasks);
    else if (change.type === "ask-partial") askPartial(change.call);
    else if (change.type === "client-call" && !state.replaying) runClientCall(change.call.id);
    else if (change.type === "composer") {
      updateComposer();
      showComposerError(change.error);
    }
  }
  if (composer) updateComposer();
}

// A card that joined a call late asks the server once for the call's current value.
function askPartial(call) {
  if (!call.late || call.late.asked) return;
  if (!state.stream?.send({ type: "get-partial", toolCallId: call.id })) return;
  chat.apply({ type: "local-partial-asked", toolCallId: call.id });
  state.partialRequests += 1;
}

// --- actions -------------------------------------------------------------------------------
async function runClientCall(toolCallId) {
  const info = chat.suspended.get(toolCallId);
  if (!info || info.kind !== "client" || state.clientDone.has(toolCallId)) return;
  state.clientDone.add(toolCallId);
  const name = clientFunctionName(info.toolName, info.payload);
  const value = chat.calls.get(toolCallId)?.value;
  const result = await runClientTool(name, info.payload.input ?? value ?? {}, { toolCallId, threadId: state.threadId });
  if (!state.stream?.send({ type: "client-tool-result", toolCallId, ...result })) {
    // No socket right now: hand it to the server through the resume endpoint instead,
    // where the run reads a client function's answer as {output} or {error}.
    await api(`/api/runs/${info.runId}/resume`, { method: "POST", body: { toolCallId, payload: result } });
  }
  applyEvent({ type: "local-client-result", toolCallId, name, result });
}

// The answer of a widget (a suspended call's question, plan or approval).
async function resume(toolCallId, payload) {
  const info = chat.suspended.get(toolCallId);
  if (!state.stream?.send({ type: "resume", toolCallId, payload })) {
    if (!info) throw new Error("this call is no longer waiting");
    await api(`/api/runs/${info.runId}/resume`, { method: "POST", body: { toolCallId, payload } });
  }
  applyEvent({ type: "local-resumed", toolCallId, payload });
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
  if (!agent || state.sending) return;
  let failure = "";
  state.sending = true;
  updateComposer();
  try {
    if (!state.threadId) {
      // No title: the server titles the thread with a summary of this first message.
      const thread = await api("/api/threads/", { method: "POST", body: { agent: agent.slug } });
      await openThread(thread.id, { fresh: true });
      history.pushState({}, "", `${chatUrl}t/${thread.id}/`);
      loadThreads();
    }
    applyEvent({ type: "local-message", text });
    conversation.scrollTop = conversation.scrollHeight;
    const options = runOptions();
    clearTimeout(state.awaitTimer);
    // Never lock the composer for good: if no run starts, say so and let the user retry.
    state.awaitTimer = setTimeout(() => {
      if (!chat.awaitingRun) return;
      applyEvent({ type: "local-await-timeout" });
      updateComposer();
      showComposerError("No run started yet: the message may not have reached the server. Try again.");
    }, 20000);
    if (!state.stream.send({ type: "chat", text, options })) {
      await api(`/api/threads/${state.threadId}/runs/`, { method: "POST", body: { message: text, options } });
      title.refresh();
    }
    input.value = "";
    autosize();
  } catch (error) {
    applyEvent({ type: "local-send-failed" });
    failure = `Could not send: ${error.message}`;
  } finally {
    state.sending = false;
    updateComposer();
    // After updateComposer, which writes the default hint.
    if (failure) showComposerError(failure);
  }
}

async function abortRun() {
  const run = chat.activeRun;
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

// --- composer ------------------------------------------------------------------------------
function updateComposer() {
  const run = chat.activeRun;
  const streaming = run && run.status === "running";
  const suspended = run && run.status === "suspended";
  const autoResume = suspended && chat.autoResumeTarget();
  const enabled = Boolean(agent) && !state.sending && !chat.awaitingRun && (!run || Boolean(autoResume));
  input.disabled = !enabled;
  sendButton.disabled = !enabled;
  stopButton.hidden = !run;
  app.dataset.run = run ? run.status : "idle";
  const pill = $("run-pill");
  pill.hidden = !run;
  pill.dataset.state = run ? run.status : "idle";
  pill.textContent = streaming ? "streaming" : suspended ? "waiting for you" : "";
  if (!agent) hint.textContent = "Choose an agent to start.";
  else if (streaming) hint.textContent = "The agent is working… Stop ends the run and keeps what it produced.";
  else if (autoResume) hint.textContent = `Auto-resume: your next message answers ${autoResume.toolName}.`;
  else if (suspended) hint.textContent = "Answer the call above to continue, or stop the run.";
  else hint.replaceChildren(...HINT_DEFAULT.map((node) => node.cloneNode(true)));
  if (enabled && document.activeElement === document.body) input.focus();
}

function showComposerError(message) {
  hint.replaceChildren(h("span", { class: "error" }, message));
}

function autosize() {
  input.style.height = "auto";
  input.style.height = `${Math.min(input.scrollHeight, 240)}px`;
}

// --- the stream ------------------------------------------------------------------------------
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
  if (status === STATES.OPEN) for (const call of chat.unaskedLateCalls()) askPartial(call);
}

// --- agents and threads --------------------------------------------------------------------
function threadAgentSlug(thread) {
  const owner = thread.agent;
  return typeof owner === "object" && owner ? owner.slug : owner;
}

async function loadThreads() {
  if (!agent) {
    renderThreads({ agent });
    return;
  }
  const mine = (thread) => [undefined, null, "", agent.slug, agent.id].includes(threadAgentSlug(thread));
  try {
    const data = await api(`/api/threads/?agent=${encodeURIComponent(agent.slug)}`);
    renderThreads({ agent, threads: listOf(data).filter(mine), currentId: state.threadId, chatUrl });
  } catch (error) {
    renderThreads({ agent, error });
  }
}

// The user's texts, for history runs whose run-start event does not carry them.
async function loadUserMessages(threadId) {
  try {
    const messages = listOf(await api(`/api/threads/${threadId}/messages/`));
    for (const message of messages) {
      const run = message.run ?? message.runId ?? message.run_id;
      if (message.role !== "user" || !run || chat.userTextByRun.has(run)) continue;
      const parts = Array.isArray(message.parts) ? message.parts : [];
      const text = parts.filter((p) => p.type === "text").map((p) => p.text).join("") || message.text || message.content || "";
      chat.userTextByRun.set(run, text);
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
    view.hideEmpty();
    conversation.append(h("div", { class: "since-banner" }, `Showing the conversation from event #${since}. `,
      h("a", { href: location.pathname }, "Show all of it")));
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
  window.chatState = chat;
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
    for (const [id, info] of chat.suspended) if (info.kind === "client") runClientCall(id);
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

// --- wiring --------------------------------------------------------------------------------
$("agent-picker").addEventListener("change", (event) => {
  const slug = event.target.value;
  location.href = slug ? `${chatUrl}${encodeURIComponent(slug)}/` : chatUrl;
});
$("new-thread").addEventListener("click", () => {
  if (agent) location.href = `${chatUrl}${encodeURIComponent(agent.slug)}/`;
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

const title = mountTitle({ heading: $("chat-title"), button: $("rename-thread"), threadId: () => state.threadId, onRenamed: loadThreads });
title.refresh();
mountSideToggle({ app, button: $("side-toggle"), close: $("side-close"), aside: $("chat-aside") });
renderAgent(agent);
renderEmpty({
  agents, agent, chatUrl,
  onPrompt: (prompt) => { input.value = prompt; autosize(); input.focus(); },
});
loadThreads();
if (state.threadId) openThread(state.threadId);
updateComposer();
