// The thread's signals and notification inbox, mounted by chat.js in the "Inbox" side
// panel: `mountInbox(body, {threadId, onEvent})`.
//
// - Signals and notifications appear in the conversation, as cards with their tag and
//   attributes, where they reached the thread: inside the run they were delivered into,
//   before the run they woke, or between turns when only persisted.
// - The panel lists the inbox (pending / delivered / summarized / digested / failed, with
//   counts), sends a notification of any priority to the thread (to watch the policy at
//   work), runs the digest now, and shows (and for studio agents edits) the agent's policy.

import { api } from "./api.js";
import { h } from "./dom.js";
import { formatInline, formatJson, timeAgo } from "./format.js";
import { PRIORITIES, renderPolicy } from "./inbox_policy.js";

const STATUSES = ["pending", "summarized", "delivered", "digested", "failed"];
const DECISIONS = {
  wake: "woke the agent",
  deliver: "delivered into the running run",
  summary: "summary now, full notification when the thread is idle",
  digest: "kept for the digest",
  persist: "persisted without waking the agent",
  discard: "discarded",
  queue: "queued for the next turn",
};

function loadStyles() {
  if (document.querySelector("link[data-inbox-css]")) return;
  const href = new URL("../../css/inbox.css", import.meta.url).href;
  document.head.append(h("link", { rel: "stylesheet", href, "data-inbox-css": "" }));
}

// --- signals in the conversation --------------------------------------------------------------
function attributeChips(attributes) {
  const entries = Object.entries(attributes || {});
  if (!entries.length) return null;
  return h("ul", { class: "sig-attrs", "aria-label": "Attributes" },
    entries.map(([key, value]) => h("li", { class: "sig-attr", dataset: { key } },
      h("span", { class: "sig-attr-key" }, key), "=",
      h("span", { class: "sig-attr-value" }, formatInline(value)))));
}

function signalKind(signal) {
  if (signal.type === "notification") {
    if (signal.attributes?.digest === "true") return "digest";
    return signal.attributes?.delivery === "summary" ? "summary" : "notification";
  }
  return signal.type;
}

function signalCard(signal) {
  const kind = signalKind(signal);
  const priority = signal.attributes?.priority;
  return h("div", {
    class: `sig-card sig-${kind}${priority ? ` sig-pri-${priority}` : ""}`,
    dataset: { signalId: String(signal.id), status: signal.status, kind },
  },
    h("div", { class: "sig-head" },
      h("code", { class: "sig-tag" }, `<${signal.tagName}>`),
      h("span", { class: "sig-kind" }, kind === "summary" ? "notification summary" : kind),
      priority ? h("span", { class: `pri pri-${priority}` }, priority) : null,
      h("span", { class: "sig-status", dataset: { status: signal.status } }, signal.status)),
    attributeChips(signal.attributes),
    signal.contents ? h("div", { class: "sig-body" }, signal.contents) : null,
    h("div", { class: "sig-foot muted" }, DECISIONS[signal.decision] || signal.decision));
}

function runTurn(runId) {
  if (!runId) return null;
  return document.querySelector(`.turn-assistant[data-run-id="${CSS.escape(runId)}"]`);
}

// Where a signal belongs: before the run it woke, inside the run it went into, else
// between turns at the end of the conversation.
function placeSignal(conversation, card, signal) {
  const woken = signal.decision === "wake" ? runTurn(signal.deliveredInRunId || signal.runId) : null;
  if (woken) {
    woken.before(card);
    return;
  }
  const into = signal.decision === "deliver" ? runTurn(signal.runId) : null;
  const body = into?.querySelector(".turn-body");
  if (body) body.append(card);
  else conversation.append(card);
}

function renderSignal(conversation, signal) {
  const existing = conversation.querySelector(`.sig-card[data-signal-id="${signal.id}"]`);
  const card = signalCard(signal);
  if (!existing) {
    document.getElementById("chat-empty")?.remove(); // the conversation is no longer empty
    const stick = conversation.scrollHeight - conversation.scrollTop - conversation.clientHeight < 120;
    placeSignal(conversation, card, signal);
    if (stick) conversation.scrollTop = conversation.scrollHeight;
    return;
  }
  existing.replaceWith(card);
  // A queued signal that now woke a run moves next to that run.
  if (signal.decision === "wake") placeSignal(conversation, card, signal);
}

// --- the inbox panel ---------------------------------------------------------------------------
class Inbox {
  constructor(body, { threadId, agentSlug }) {
    this.body = body;
    this.threadId = threadId;
    this.agentSlug = agentSlug;
    this.filter = "";
    this.records = [];
    this.counts = {};
    this.refreshTimer = null;
    this.build();
  }

  url(tail) {
    return `/api/threads/${this.threadId}/${tail}`;
  }

  build() {
    this.countsNode = h("div", { class: "inbox-counts", role: "tablist", "aria-label": "Filter by status" });
    this.listNode = h("ol", { class: "inbox-list", "aria-label": "Notifications" });
    this.resultNode = h("div", { class: "inbox-result", role: "status", "aria-live": "polite" });
    this.form = this.buildForm();
    this.digestButton = h("button", { type: "button", class: "inbox-digest", onclick: () => this.digestNow() }, "Digest now");
    this.policyNode = h("details", { class: "inbox-policy" }, h("summary", {}, "Delivery policy"),
      h("p", { class: "muted" }, "Loading…"));
    this.policyNode.addEventListener("toggle", () => { if (this.policyNode.open) this.loadPolicy(); });
    this.body.replaceChildren(
      this.countsNode,
      this.listNode,
      h("div", { class: "inbox-actions" }, this.digestButton),
      this.form,
      this.resultNode,
      this.policyNode,
    );
  }

  buildForm() {
    const priority = h("select", { name: "priority", "aria-label": "Priority" },
      PRIORITIES.map((p) => h("option", { value: p, selected: p === "high" }, p)));
    const form = h("form", { class: "inbox-form", "aria-label": "Send a notification", autocomplete: "off" },
      h("div", { class: "inbox-form-title" }, "Send a notification"),
      h("div", { class: "inbox-row" },
        h("label", {}, "Source", h("input", { name: "source", value: "tester", required: true, maxlength: 100 })),
        h("label", {}, "Priority", priority)),
      h("label", {}, "Summary", h("input", { name: "summary", required: true, placeholder: "Build 42 failed on main" })),
      h("details", { class: "inbox-more" }, h("summary", {}, "Kind, payload, keys, attributes"),
        h("label", {}, "Kind", h("input", { name: "kind", placeholder: "build" })),
        h("label", {}, "Payload (JSON)", h("textarea", { name: "payload", rows: 2, class: "code", placeholder: '{"url": "…"}' })),
        h("div", { class: "inbox-row" },
          h("label", {}, "Dedupe key", h("input", { name: "dedupeKey" })),
          h("label", {}, "Coalesce key", h("input", { name: "coalesceKey" }))),
        h("label", {}, "Attributes (JSON object)", h("textarea", { name: "attributes", rows: 2, class: "code", placeholder: '{"repo": "studio"}' }))),
      h("button", { type: "submit", class: "primary" }, "Send notification"));
    form.addEventListener("submit", (event) => {
      event.preventDefault();
      this.send(new FormData(form));
    });
    return form;
  }

  parseJson(text, field) {
    if (!text.trim()) return undefined;
    try {
      return JSON.parse(text);
    } catch {
      throw new Error(`${field} is not valid JSON.`);
    }
  }

  async send(data) {
    const body = {
      source: data.get("source"), summary: data.get("summary"), priority: data.get("priority"),
      kind: data.get("kind") || "", dedupeKey: data.get("dedupeKey") || "", coalesceKey: data.get("coalesceKey") || "",
    };
    try {
      const payload = this.parseJson(data.get("payload") || "", "Payload");
      const attributes = this.parseJson(data.get("attributes") || "", "Attributes");
      if (payload !== undefined) body.payload = payload;
      if (attributes !== undefined) body.attributes = attributes;
      const result = await api(this.url("notifications/"), { method: "POST", body });
      const merged = result.merged ? ` (merged: ${result.merged})` : "";
      this.say(`${body.priority}: ${DECISIONS[result.decision] || result.decision}${merged}.`, "ok", result.decision);
      this.form.elements.summary.value = "";
      this.refresh();
    } catch (error) {
      this.say(error.message, "error");
    }
  }

  say(text, kind, decision = "") {
    this.resultNode.replaceChildren(h("span", { class: `inbox-say inbox-say-${kind}`, dataset: { decision } }, text));
  }

  async digestNow() {
    try {
      const result = await api(this.url("notifications/digest"), { method: "POST", body: {} });
      this.say(result.digested.length ? `Digested ${result.digested.length} record(s).` : "Nothing waiting for the digest.", "ok");
      this.refresh();
    } catch (error) {
      this.say(error.message, "error");
    }
  }

  scheduleRefresh() {
    clearTimeout(this.refreshTimer);
    this.refreshTimer = setTimeout(() => this.refresh(), 150);
  }

  async refresh() {
    try {
      const data = await api(this.url("notifications/"));
      this.records = data.results;
      this.counts = data.counts;
      this.render();
    } catch (error) {
      this.listNode.replaceChildren(h("li", { class: "error" }, `The inbox could not be loaded (${error.message}).`));
    }
  }

  render() {
    const total = this.records.length;
    this.countsNode.replaceChildren(
      this.countChip("", "all", total),
      ...STATUSES.map((status) => this.countChip(status, status, this.counts[status]?.records ?? 0, this.counts[status]?.notifications ?? 0)));
    const shown = this.filter ? this.records.filter((r) => r.status === this.filter) : this.records;
    if (!shown.length) {
      this.listNode.replaceChildren(h("li", { class: "empty" }, this.filter ? `No ${this.filter} notifications.` : "No notifications yet. Send one below."));
      return;
    }
    this.listNode.replaceChildren(...shown.map((record) => this.recordItem(record)));
  }

  countChip(status, label, records, notifications = records) {
    const chip = h("button", {
      type: "button", role: "tab", class: `inbox-count${this.filter === status ? " active" : ""}`,
      dataset: { status: status || "all" }, "aria-selected": this.filter === status ? "true" : "false",
      title: notifications !== records ? `${records} records standing for ${notifications} notifications` : "",
      onclick: () => { this.filter = status; this.render(); },
    }, label, " ", h("span", { class: "n" }, String(records)));
    return chip;
  }

  recordItem(record) {
    return h("li", { class: `inbox-item st-${record.status}`, dataset: { id: String(record.id), status: record.status } },
      h("div", { class: "inbox-item-head" },
        h("span", { class: `pri pri-${record.priority}` }, record.priority),
        h("span", { class: "inbox-source" }, record.kind ? `${record.source} / ${record.kind}` : record.source),
        record.count > 1 ? h("span", { class: "inbox-times", title: "Coalesced notifications" }, `×${record.count}`) : null,
        h("span", { class: "inbox-status" }, record.status)),
      h("div", { class: "inbox-summary" }, record.summary),
      record.error ? h("div", { class: "error inbox-error" }, record.error) : null,
      h("div", { class: "inbox-meta muted" }, timeAgo(record.createdAt),
        record.action ? ` · policy: ${record.action}` : "",
        Object.keys(record.payload || {}).length ? h("details", { class: "inbox-payload" }, h("summary", {}, "payload"), h("pre", {}, formatJson(record.payload))) : null));
  }

  // --- the agent's policy ---------------------------------------------------------------------
  policyUrl() {
    return `/api/agents/${encodeURIComponent(this.agentSlug)}/notification-policy`;
  }

  async loadPolicy() {
    if (!this.agentSlug) return;
    try {
      this.renderPolicy(await api(this.policyUrl()));
    } catch (error) {
      this.policyNode.replaceChildren(this.policyNode.firstChild, h("p", { class: "error" }, error.message));
    }
  }

  renderPolicy(data) {
    renderPolicy(this.policyNode, data, {
      onSave: async (policy) => this.renderPolicy(await api(this.policyUrl(), { method: "PUT", body: { policy } })),
    });
  }
}

export function mountInbox(body, { threadId, onEvent }) {
  loadStyles();
  const app = document.getElementById("chat-app");
  const conversation = document.getElementById("conversation");
  const inbox = new Inbox(body, { threadId, agentSlug: app?.dataset.agent || "" });
  window.studioInbox = inbox; // for the browser tests and the console
  inbox.refresh();
  onEvent((event) => {
    if (event.type === "signal" && event.signal) {
      renderSignal(conversation, event.signal);
      if (event.signal.notificationId) inbox.scheduleRefresh();
    } else if (event.type === "notification") {
      inbox.scheduleRefresh();
    }
  });
  return inbox;
}
