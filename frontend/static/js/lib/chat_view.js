// The conversation of the chat page, drawn from the change records of lib/chat_state.js:
// user bubbles, one turn per run (its text segments, tool cards, signal lines and a foot
// with the run's status and facts). Each change touches only the nodes it names, so a
// streamed delta costs the size of the delta.

import { ToolCard } from "./chat_cards.js";
import { renderMarkdown } from "./chat_render.js";
import { h } from "./dom.js";
import { formatJson } from "./format.js";

const RUN_NOTES = {
  running: "", suspended: "Waiting for your answer", completed: "",
  failed: "Run failed", aborted: "Stopped", error: "Run failed",
};

// Text that looks like markdown is rendered as such once its segment is complete; while it
// streams it is plain text.
const MARKDOWN_HINT = /[`*#\n[]|^\s*[-\d]/;

// The drawing method of each type of change; the page handles the others.
const DRAW = {
  message: "drawMessage", run: "drawRun", "run-status": "drawRunStatus", text: "drawText",
  "segment-end": "drawSegmentEnd", call: "drawCall", signal: "drawSignal",
};

export class ChatView {
  // agentName: for the turns' avatar; toolKinds: {tool key: kind} of the agent's tools;
  // onAnswer(callId, payload) sends a widget's answer.
  constructor(conversation, { agentName = "Agent", toolKinds = {}, chatUrl = "/chat/", onAnswer } = {}) {
    this.conversation = conversation;
    this.agentName = agentName;
    this.toolKinds = toolKinds;
    this.cardOptions = { chatUrl, onAnswer };
    this.bubbles = new Map(); // message id -> bubble
    this.turns = new Map(); // run id -> {element, body, foot, segment}
    this.cards = new Map(); // call id -> ToolCard
  }

  render(changes) {
    for (const change of changes) {
      const draw = DRAW[change.type];
      if (draw) this[draw](change);
    }
  }

  hideEmpty() {
    document.getElementById("chat-empty")?.remove();
  }

  // Appends to a turn's body, or to the conversation itself.
  append(node, turn = null) {
    this.hideEmpty();
    (turn ? turn.body : this.conversation).append(node);
  }

  drawMessage({ message }) {
    let bubble = this.bubbles.get(message.id);
    if (!bubble) {
      bubble = h("div", { class: "turn turn-user" }, h("div", { class: "bubble" }, message.text));
      this.bubbles.set(message.id, bubble);
      this.append(bubble);
    }
    bubble.classList.toggle("is-sending", message.status === "sending");
    bubble.classList.toggle("is-failed", message.status === "failed");
  }

  drawRun({ run }) {
    const body = h("div", { class: "turn-body" });
    const foot = h("div", { class: "run-foot" });
    const element = h("div", { class: "turn turn-assistant", dataset: { runId: run.id || "" } },
      h("div", { class: "avatar", "aria-hidden": "true" }, this.agentName.slice(0, 1).toUpperCase()),
      h("div", { class: "turn-main" }, h("div", { class: "turn-who" }, this.agentName), body, foot));
    this.turns.set(run.id, { element, body, foot, segment: null });
    this.append(element);
  }

  drawRunStatus({ run }) {
    const turn = this.turns.get(run.id);
    turn.element.dataset.status = run.status;
    const note = run.detail || RUN_NOTES[run.status] || "";
    turn.foot.replaceChildren();
    if (note) turn.foot.append(h("span", { class: `run-note run-note-${run.status}` }, note));
    const facts = run.status === "completed" ? finishFacts(run.finish) : "";
    // What a developer wants to know about a finished run, small and out of the way.
    if (facts) turn.foot.append(h("span", { class: "run-facts-line muted" }, facts));
    if (run.id && run.status !== "running") {
      turn.foot.append(h("a", { class: "run-trace-link", href: `/traces/${run.id}/` }, "view trace"));
    }
  }

  drawText({ run, delta }) {
    const turn = this.turns.get(run.id);
    if (!turn.segment) {
      turn.segment = h("div", { class: "msg-text streaming" });
      turn.body.append(turn.segment);
    }
    turn.segment.append(delta);
  }

  drawSegmentEnd({ run, part }) {
    const turn = this.turns.get(run.id);
    const segment = turn.segment;
    if (!segment) return;
    turn.segment = null;
    segment.classList.remove("streaming");
    if (MARKDOWN_HINT.test(part.text)) segment.replaceChildren(renderMarkdown(part.text));
  }

  drawCall(change) {
    const { call } = change;
    if (change.aspect === "created") {
      const card = new ToolCard(call, { ...this.cardOptions, toolKind: this.toolKinds[call.toolName] });
      this.cards.set(call.id, card);
      this.append(card.element, this.turns.get(call.runId));
      return;
    }
    this.cards.get(call.id)?.update(change);
  }

  drawSignal({ signal }) {
    const content = typeof signal.content === "string" ? signal.content : formatJson(signal.content);
    this.append(h("div", { class: "signal-line" }, h("span", { class: "signal-tag" }, signal.tag), " ", content),
      signal.runId ? this.turns.get(signal.runId) : null);
  }
}

// "openai/gpt-4o-mini · 3 steps · 120 tokens · finished: length" (the model that answered)
function finishFacts(finish) {
  if (!finish) return "";
  const facts = [];
  if (finish.model) facts.push(finish.model);
  if (finish.steps) facts.push(`${finish.steps} step${finish.steps === 1 ? "" : "s"}`);
  if (finish.usage && finish.usage.total_tokens) facts.push(`${finish.usage.total_tokens} tokens`);
  if (finish.finishReason && !["stop", "tool-calls"].includes(finish.finishReason)) facts.push(`finished: ${finish.finishReason}`);
  return facts.join(" · ");
}
