// Results of a knowledge search as citation cards: [n], the source with its page and
// heading, the score, the passage, and a link that opens the source at that place (the
// document viewer's #chunk-<n>, or the original web page with a text fragment).
// Used by the chat (tool cards of kind knowledge_search), the tool console and the
// knowledge page's search box.

import { h } from "./dom.js";

export function isKnowledgeResult(value) {
  return Boolean(value && typeof value === "object" && value.kind === "knowledge_search" && Array.isArray(value.results));
}

function formatScore(result) {
  const parts = [`score ${Number(result.score).toFixed(4)}`];
  const scores = result.scores || {};
  if (scores.text != null && scores.fused != null) parts.push(`text ${Number(scores.text).toFixed(2)}`);
  if (scores.vector != null && scores.fused != null) parts.push(`vector ${Number(scores.vector).toFixed(2)}`);
  return parts.join(" · ");
}

export function citationCard(result) {
  const doc = result.document || {};
  const where = [result.page ? `page ${result.page}` : "", result.heading || ""].filter(Boolean).join(" · ");
  const external = doc.kind === "url";
  const link = h("a", {
    class: "citation-link",
    href: result.url || result.viewer_url,
    target: "_blank",
    rel: "noopener noreferrer",
    title: external ? "Open the page at this passage" : "Open the document at this passage",
  }, external ? "open page ↗" : "open ↗");
  const passage = String(result.text || "");
  return h("li", { class: "citation", dataset: { rank: String(result.rank), chunk: String(result.chunk) } },
    h("header", { class: "citation-head" },
      h("span", { class: "citation-mark" }, result.citation || `[${result.rank}]`),
      h("span", { class: "citation-source" }, doc.name || "document"),
      where ? h("span", { class: "citation-where muted" }, where) : null,
      h("span", { class: "citation-score muted" }, formatScore(result)),
      link),
    h("p", { class: "citation-text" }, passage.length > 600 ? `${passage.slice(0, 600)}…` : passage));
}

export function renderCitations(value) {
  const results = (value && value.results) || [];
  if (!results.length) return h("p", { class: "muted citations-empty" }, "No passage matched.");
  return h("ol", { class: "citations" }, results.map(citationCard));
}
