// The agent editor's revisions: the list (newest first) and one revision's diff against
// the version before it, drawn as tables of lines; renderDiff() also draws the diff of a
// save conflict.

import { fill, h } from "./dom.js";
import { fullTime, timeAgo } from "./format.js";

const $ = (id) => document.getElementById(id);
const DIFF_SIGNS = { insert: "+", delete: "−" };

// Line diffs ({field, note, lines}: lib/line_diff.js, or the server's) as tables: old and
// new line numbers, the sign, the text.
export function renderDiff(container, entries) {
  fill(container, entries.length ? entries.map((entry) => h("div", { class: "diff-block" },
    h("div", { class: "diff-field" }, entry.field, entry.note ? h("span", { class: "diff-note" }, ` · ${entry.note}`) : null),
    h("table", { class: "diff-table" }, entry.lines.map((line) => h("tr", { class: `diff-${line.op}` },
      [line.old ?? "", line.new ?? "", DIFF_SIGNS[line.op] || " ", line.text].map((text) => h("td", {}, text)))))))
    : h("p", { class: "muted" }, "No changes."));
}

export class RevisionList {
  // call(url) -> {ok, status, data}: the page's requests; url: the revisions endpoint;
  // canView: the user may read revisions; onShow(revision): after one is shown (the page
  // wires its restore button).
  constructor({ call, url, canView, onShow }) {
    Object.assign(this, { call, url, canView, onShow });
    this.selected = null;
  }

  async load() {
    const list = $("revision-list");
    if (!this.canView) {
      fill(list, h("li", { class: "muted" }, "Reading revisions needs the view permission."));
      return;
    }
    const res = await this.call(this.url);
    const items = res.ok ? res.data.results : [];
    fill(list, items.length ? items.map((rev) => h("li", {}, h("button", {
      type: "button", class: `revision${rev.id === this.selected ? " selected" : ""}`, dataset: { id: rev.id },
      title: fullTime(rev.created_at), onclick: () => this.show(rev.id),
    },
    h("strong", {}, `v${rev.version}${rev.kind === "save" ? "" : ` · ${rev.kind}`}`), " ",
    h("span", { class: "muted" }, `${rev.author || "someone"} · ${rev.created_at ? timeAgo(rev.created_at) : ""}`), h("br"),
    h("span", { class: "fields" }, rev.fields.join(", ")))))
      : h("li", { class: "muted" }, "No revisions yet."));
  }

  async show(id) {
    const res = await this.call(`${this.url}${id}/`);
    if (!res.ok) return;
    const rev = res.data;
    this.selected = id;
    for (const button of document.querySelectorAll(".revision")) button.classList.toggle("selected", button.dataset.id === String(id));
    $("revision-detail").hidden = false;
    $("revision-title").textContent = `Version ${rev.version} by ${rev.author || "someone"}`;
    renderDiff($("revision-diff"), rev.diff);
    this.onShow(rev);
  }
}
