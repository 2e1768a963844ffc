// The chat page around the conversation: the agent's summary and threads on the left, the
// empty conversation's agent cards and prompts, and the task list and stream facts on the
// right. Each function draws one panel from plain data.

import { fill, h } from "./dom.js";
import { timeAgo } from "./format.js";

const $ = (id) => document.getElementById(id);

const sourceBadge = (agent) => h("span", { class: `badge badge-${agent.source}` }, agent.source === "code" ? "Code" : "Studio");

export function renderAgent(agent) {
  const summary = $("agent-summary");
  $("new-thread").disabled = !agent;
  if (!agent) {
    summary.hidden = true;
    return;
  }
  summary.hidden = false;
  fill(summary,
    h("div", { class: "agent-line" }, h("strong", {}, agent.name), sourceBadge(agent)),
    h("code", { class: "muted agent-model" }, agent.model),
    agent.description ? h("p", { class: "muted" }, agent.description) : null,
    h("ul", { class: "chips" }, [...agent.tools, ...agent.subagents].map((name) => h("li", { class: `chip${name.startsWith("agent-") ? " chip-agent" : ""}` }, name))));
  $("chat-subtitle").textContent = `${agent.name} · ${agent.model}`;
}

// threads: the agent's threads (null: they could not be loaded, with `error`).
export function renderThreads({ agent, threads, error, currentId, chatUrl }) {
  const list = $("thread-list");
  if (!agent) {
    fill(list, h("li", { class: "empty" }, "Pick an agent to see its threads."));
    return;
  }
  if (error) {
    const reason = error.status ? `HTTP ${error.status}` : error.message;
    fill(list, h("li", { class: "error" }, `Threads could not be loaded (${reason}).`));
    return;
  }
  $("thread-count").textContent = String(threads.length);
  if (!threads.length) {
    fill(list, h("li", { class: "empty" }, "No threads yet: send a message to start one."));
    return;
  }
  fill(list, threads.map((thread) => h("li", { class: `thread-item${thread.id === currentId ? " active" : ""}`, dataset: { threadId: thread.id } },
    h("a", { href: `${chatUrl}t/${thread.id}/` },
      h("span", { class: "thread-title" }, thread.title || "Untitled chat"),
      h("span", { class: "thread-meta muted" },
        timeAgo(thread.updated_at || thread.updatedAt || thread.created_at),
        thread.activeRun ? h("span", { class: `thread-state thread-state-${thread.activeRun.status}` },
          thread.activeRun.status === "suspended" ? "waiting for you" : "running") : null)))));
}

// Prompts that exercise the agent's tools and sub-agents.
function promptsFor(agent) {
  const prompts = [];
  for (const name of agent.tools) {
    if (name === "ask_user") prompts.push("Ask me which city to check, options: Paris, Tokyo or Sydney");
    else if (name === "submit_plan") prompts.push("Make a plan to compare the weather of three cities");
    else if (/convert/.test(name)) prompts.push(`Use ${name} to convert 10 km to mi`);
    else if (/weather|city|lookup/.test(name)) prompts.push(`Use ${name} for Paris`);
    else if (!name.startsWith("task_")) prompts.push(`Use ${name}`);
  }
  for (const name of agent.subagents) prompts.push(`Ask the ${name.slice("agent-".length)} about the weather in Tokyo`);
  return prompts.slice(0, 4);
}

// The empty conversation: agent cards to pick from, or prompts for the chosen agent
// (onPrompt(text) puts one in the composer).
export function renderEmpty({ agents, agent, chatUrl, onPrompt }) {
  const empty = $("chat-empty");
  if (!empty) return;
  if (!agent) {
    fill(empty, h("h2", {}, "Pick an agent to talk to"),
      h("p", { class: "muted" }, "Code-defined and studio-defined agents both work here."),
      h("div", { class: "agent-grid" }, agents.map((choice) => h("a", { class: "agent-tile", href: `${chatUrl}${encodeURIComponent(choice.slug)}/` },
        h("strong", {}, choice.name), sourceBadge(choice),
        h("span", { class: "muted" }, choice.description || choice.model)))));
    return;
  }
  const prompts = promptsFor(agent);
  fill(empty, h("h2", {}, `Chat with ${agent.name}`),
    h("p", { class: "muted" }, "Text streams in as the model writes it; each tool call shows its arguments while they are generated, then its result."),
    prompts.length ? h("div", { class: "prompt-list" }, prompts.map((prompt) => h("button", {
      type: "button", class: "prompt-chip", onclick: () => onPrompt(prompt),
    }, prompt))) : null);
}

// tasks: the model's task list ({id, title, status}, lib/chat_state.js).
export function renderTasks(tasks) {
  const done = tasks.filter((task) => /complete|done/.test(task.status)).length;
  $("task-count").textContent = tasks.length ? `${done}/${tasks.length}` : "";
  if (!tasks.length) {
    fill($("task-list"), h("li", { class: "empty" }, "The agent has no task list yet."));
    return;
  }
  fill($("task-list"), tasks.map(({ title, status }) => h("li", { class: `task task-${status}`, dataset: { status } },
    h("span", { class: "task-mark", "aria-hidden": "true" }, status.includes("complete") || status === "done" ? "✓" : status === "in_progress" ? "●" : "○"),
    h("span", { class: "task-title" }, title),
    status === "in_progress" ? h("span", { class: "task-badge" }, "in progress") : null)));
}

// The stream facts: the last seq, how many events, and the recent ones (when open).
export class EventLog {
  constructor(limit = 200) {
    this.limit = limit;
    this.lines = [];
    this.count = 0;
    this.details = document.querySelector(".event-log");
    this.details.addEventListener("toggle", () => this.render());
  }

  add(event) {
    this.count += 1;
    if (event.seq !== undefined) $("fact-seq").textContent = `#${event.seq}`;
    $("fact-events").textContent = String(this.count);
    this.lines.push(`${event.seq ?? "·"} ${event.type}${event.toolName ? ` ${event.toolName}` : ""}`);
    if (this.lines.length > this.limit) this.lines.shift();
    if (this.details.open) this.render();
  }

  render() {
    fill($("event-log"), this.lines.slice(-80).reverse().map((line) => h("li", {}, line)));
  }
}
