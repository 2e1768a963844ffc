// The thread's signals and notification inbox (issue 6), mounted by chat.js in the
// "Inbox" side panel: `mountInbox(body, {threadId, onEvent})`.
//
// - Signals and notifications appear in the conversation, as cards with their tag and
//   attributes, where they reached the thread: inside the run they were delivered into,
//   before the run they woke, or between turns when only persisted.
// - The panel lists the inbox (pending / delivered / summarized / digested / failed, with
//   counts), sends a notification of any priority to the thread (to watch the policy at
//   work), runs the digest now, and shows (and for studio agents edits) the agent's policy.

import { api } from "./api.js";
import { el, formatJson } from "./chat_render.js";
import { timeAgo } from "./format.js";

const PRIORITIES = ["low", "medium", "high", "urgent"];
const STATUSES = ["pending", "summarized", "delivered", "digested", "failed"];
const ACTIONS = ["now", "summary", "digest", "persist"];
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
  document.head.append(el("link", { rel: "stylesheet", href, "data-inbox-css": "" }));
}

// --- signals in the conversation --------------------------------------------------------------
function attributeChips(attributes) {
  const entries = Object.entries(attributes || {});
  if (!entries.length) return null;
  return el("ul", { class: "sig-attrs", "aria-label": "Attributes" },
    entries.map(([key, value]) => el("li", { class: "sig-attr", dataset: { key } },
      el("span", { class: "sig-attr-key" }, key), "=",
      el("span", { class: "sig-attr-value" }, typeof value === "string" ? value : JSON.stringify(value)))));
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
  return el("div", {
    class: `sig-card sig-${kind}${priority ? ` sig-pri-${priority}` : ""}`,
    dataset: { signalId: String(signal.id), status: signal.status, kind },
  },
    el("div", { class: "sig-head" },
      el("code", { class: "sig-tag" }, `<${signal.tagName}>`),
      el("span", { class: "sig-kind" }, kind === "summary" ? "notification summary" : kind),
      priority ? el("span", { class: `pri pri-${priority}` }, priority) : null,
      el("span", { class: "sig-status", dataset: { status: signal.status } }, signal.status)),
    attributeChips(signal.attributes),
    signal.contents ? el("div", { class: "sig-body" }, signal.contents) : null,
    el("div", { class: "sig-foot muted" }, DECISIONS[signal.decision] || signal.decision));
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
    this.countsNode = el("div", { class: "inbox-counts", role: "tablist", "aria-label": "Filter by status" });
    this.listNode = el("ol", { class: "inbox-list", "aria-label": "Notifications" });
    this.resultNode = el("div", { class: "inbox-result", role: "status", "aria-live": "polite" });
    this.form = this.buildForm();
    this.digestButton = el("button", { type: "button", class: "inbox-digest", onclick: () => this.digestNow() }, "Digest now");
    this.policyNode = el("details", { class: "inbox-policy" }, el("summary", {}, "Delivery policy"),
      el("p", { class: "muted" }, "Loading…"));
    this.policyNode.addEventListener("toggle", () => { if (this.policyNode.open) this.loadPolicy(); });
    this.body.replaceChildren(
      this.countsNode,
      this.listNode,
      el("div", { class: "inbox-actions" }, this.digestButton),
      this.form,
      this.resultNode,
      this.policyNode,
    );
  }

  buildForm() {
    const priority = el("select", { name: "priority", "aria-label": "Priority" },
      PRIORITIES.map((p) => el("option", { value: p, selected: p === "high" }, p)));
    const form = el("form", { class: "inbox-form", "aria-label": "Send a notification", autocomplete: "off" },
      el("div", { class: "inbox-form-title" }, "Send a notification"),
      el("div", { class: "inbox-row" },
        el("label", {}, "Source", el("input", { name: "source", value: "tester", required: true, maxlength: 100 })),
        el("label", {}, "Priority", priority)),
      el("label", {}, "Summary", el("input", { name: "summary", required: true, placeholder: "Build 42 failed on main" })),
      el("details", { class: "inbox-more" }, el("summary", {}, "Kind, payload, keys, attributes"),
        el("label", {}, "Kind", el("input", { name: "kind", placeholder: "build" })),
        el("label", {}, "Payload (JSON)", el("textarea", { name: "payload", rows: 2, class: "code", placeholder: '{"url": "…"}' })),
        el("div", { class: "inbox-row" },
          el("label", {}, "Dedupe key", el("input", { name: "dedupeKey" })),
          el("label", {}, "Coalesce key", el("input", { name: "coalesceKey" }))),
        el("label", {}, "Attributes (JSON object)", el("textarea", { name: "attributes", rows: 2, class: "code", placeholder: '{"repo": "studio"}' }))),
      el("button", { type: "submit", class: "primary" }, "Send notification"));
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
    this.resultNode.replaceChildren(el("span", { class: `inbox-say inbox-say-${kind}`, dataset: { decision } }, text));
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
      this.listNode.replaceChildren(el("li", { class: "error" }, `The inbox could not be loaded (${error.message}).`));
    }
  }

  render() {
    const total = this.records.length;
    this.countsNode.replaceChildren(
      this.countChip("", "all", total),
      ...STATUSES.map((status) => this.countChip(status, status, this.counts[status]?.records ?? 0, this.counts[status]?.notifications ?? 0)));
    const shown = this.filter ? this.records.filter((r) => r.status === this.filter) : this.records;
    if (!shown.length) {
      this.listNode.replaceChildren(el("li", { class: "empty" }, this.filter ? `No ${this.filter} notifications.` : "No notifications yet. Send one below."));
      return;
    }
    this.listNode.replaceChildren(...shown.map((record) => this.recordItem(record)));
  }

  countChip(status, label, records, notifications = records) {
    const chip = el("button", {
      type: "button", role: "tab", class: `inbox-count${this.filter === status ? " active" : ""}`,
      dataset: { status: status || "all" }, "aria-selected": this.filter === status ? "true" : "false",
      title: notifications !== records ? `${records} records standing for ${notifications} notifications` : "",
      onclick: () => { this.filter = status; this.render(); },
    }, label, " ", el("span", { class: "n" }, String(records)));
    return chip;
  }

  recordItem(record) {
    return el("li", { class: `inbox-item st-${record.status}`, dataset: { id: String(record.id), status: record.status } },
      el("div", { class: "inbox-item-head" },
        el("span", { class: `pri pri-${record.priority}` }, record.priority),
        el("span", { class: "inbox-source" }, record.kind ? `${record.source} / ${record.kind}` : record.source),
        record.count > 1 ? el("span", { class: "inbox-times", title: "Coalesced notifications" }, `×${record.count}`) : null,
        el("span", { class: "inbox-status" }, record.status)),
      el("div", { class: "inbox-summary" }, record.summary),
      record.error ? el("div", { class: "error inbox-error" }, record.error) : null,
      el("div", { class: "inbox-meta muted" }, timeAgo(record.createdAt),
        record.action ? ` · policy: ${record.action}` : "",
        Object.keys(record.payload || {}).length ? el("details", { class: "inbox-payload" }, el("summary", {}, "payload"), el("pre", {}, formatJson(record.payload))) : null));
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
      this.policyNode.replaceChildren(this.policyNode.firstChild, el("p", { class: "error" }, error.message));
    }
  }

  renderPolicy(data) {
    const editable = data.editable;
    const choices = (state, inherit) => [
      ...(inherit ? [el("option", { value: "" }, "inherit")] : []),
      ...ACTIONS.filter((a) => a !== "summary" || state === "active").map((a) => el("option", { value: a }, a)),
    ];
    const select = (name, label, state, value, inherit) => {
      const node = el("select", { name, "aria-label": label }, choices(state, inherit));
      node.value = value || "";
      return node;
    };
    const cell = (priority, state) => {
      const value = data.table[priority][state];
      if (!editable) return el("td", { class: `act act-${value}` }, value);
      return el("td", {}, select(`${priority}.${state}`, `${priority} when ${state}`, state, value, false));
    };
    const table = el("table", { class: "policy-table" },
      el("thead", {}, el("tr", {}, el("th", {}, "priority"), el("th", {}, "active"), el("th", {}, "idle"))),
      el("tbody", {}, PRIORITIES.map((p) => el("tr", {}, el("th", {}, el("span", { class: `pri pri-${p}` }, p)), cell(p, "active"), cell(p, "idle")))));
    // Rules for one source override the priority table where they say something.
    const sourceTable = (source, rules) => {
      const rule = (priority, state) => rules?.[priority]?.[state] || "";
      const body = PRIORITIES.map((p) => el("tr", {}, el("th", {}, el("span", { class: `pri pri-${p}` }, p)),
        ...["active", "idle"].map((state) => editable
          ? el("td", {}, select(`${p}.${state}`, `${source}: ${p} when ${state}`, state, rule(p, state), true))
          : el("td", { class: `act act-${rule(p, state) || "inherit"}` }, rule(p, state) || "inherit"))));
      const remove = editable ? el("button", { type: "button", class: "link policy-source-remove", "aria-label": `Remove the rules for ${source}`,
        onclick: (event) => event.target.closest(".policy-source").remove() }, "remove") : null;
      return el("div", { class: "policy-source", dataset: { source } },
        el("div", { class: "policy-source-head" }, "From ", el("code", {}, source), remove),
        el("table", { class: "policy-table" },
          el("thead", {}, el("tr", {}, el("th", {}, "priority"), el("th", {}, "active"), el("th", {}, "idle"))),
          el("tbody", {}, body)));
    };
    const sources = el("div", { class: "policy-sources" },
      Object.entries(data.policy?.source || {}).map(([source, rules]) => sourceTable(source, rules)));
    const note = data.codeFunction
      ? "This agent decides in code (a policy function); the table is its fallback."
      : editable ? "What happens to a notification while a run is going (active) or not (idle)." : "Defined in code: read-only here.";
    const children = [this.policyNode.firstChild, el("p", { class: "muted" }, note), table];
    if (editable || sources.children.length) {
      children.push(el("p", { class: "muted" }, "By source: a source's rules come first; \"inherit\" goes by priority."), sources);
    }
    if (editable) {
      const status = el("span", { class: "policy-status muted", role: "status" });
      const newSource = el("input", { name: "policy-source", placeholder: "source, e.g. github", "aria-label": "Source to add rules for" });
      const add = el("button", { type: "button", class: "secondary policy-source-add", onclick: () => {
        const source = newSource.value.trim();
        if (!source) return;
        if (!sources.querySelector(`.policy-source[data-source="${CSS.escape(source)}"]`)) sources.append(sourceTable(source, {}));
        newSource.value = "";
      } }, "Add source");
      children.push(el("div", { class: "policy-source-new" }, newSource, add));
      const save = el("button", { type: "button", class: "primary", onclick: async () => {
        const priority = {};
        for (const p of PRIORITIES) {
          priority[p] = { active: table.querySelector(`[name="${p}.active"]`).value, idle: table.querySelector(`[name="${p}.idle"]`).value };
        }
        const source = {};
        for (const node of sources.querySelectorAll(".policy-source")) {
          const rules = {};
          for (const p of PRIORITIES) {
            for (const state of ["active", "idle"]) {
              const value = node.querySelector(`[name="${p}.${state}"]`).value;
              if (value) (rules[p] ||= {})[state] = value;
            }
          }
          if (Object.keys(rules).length) source[node.dataset.source] = rules;
        }
        try {
          const saved = await api(this.policyUrl(), { method: "PUT", body: { policy: { priority, source } } });
          this.renderPolicy(saved);
          this.policyNode.querySelector(".policy-status").textContent = "Saved.";
        } catch (error) {
          status.textContent = error.message;
          status.className = "policy-status error";
        }
      } }, "Save policy");
      children.push(el("div", { class: "policy-actions" }, save, status));
    }
    this.policyNode.replaceChildren(...children);
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
