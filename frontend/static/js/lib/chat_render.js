// What the chat shows of model text and tool values: light markdown for finished text and
// values as nodes, built from text nodes only (lib/dom.js).

import { h } from "./dom.js";
import { formatJson } from "./format.js";

// A value as a node: strings as text, everything else as pretty JSON.
export function valueNode(value) {
  if (typeof value === "string") return h("div", { class: "value-text" }, value);
  return h("pre", { class: "value-json" }, formatJson(value));
}

// Inline markdown: `code`, **bold**, *italic*, [text](http...). Built from text nodes, so
// nothing the model writes can inject markup.
function inline(text) {
  const out = document.createDocumentFragment();
  const pattern = /(`[^`\n]+`)|(\*\*[^*\n]+\*\*)|(\*[^*\s][^*\n]*\*)|(\[[^\]\n]+\]\((https?:\/\/[^)\s]+)\))/g;
  let last = 0;
  for (const match of text.matchAll(pattern)) {
    if (match.index > last) out.append(text.slice(last, match.index));
    const token = match[0];
    if (match[1]) out.append(h("code", {}, token.slice(1, -1)));
    else if (match[2]) out.append(h("strong", {}, token.slice(2, -2)));
    else if (match[3]) out.append(h("em", {}, token.slice(1, -1)));
    else out.append(h("a", { href: match[5], target: "_blank", rel: "noopener noreferrer" }, token.slice(1, token.indexOf("]"))));
    last = match.index + token.length;
  }
  if (last < text.length) out.append(text.slice(last));
  return out;
}

// Light markdown for finished text (fences, headings, lists, paragraphs). While text
// streams it is shown as plain text; this runs once when a segment is complete.
export function renderMarkdown(text) {
  const root = document.createDocumentFragment();
  const lines = text.replace(/\r\n/g, "\n").split("\n");
  let paragraph = [];
  let list = null;
  const flushParagraph = () => {
    if (paragraph.length) {
      const p = h("p");
      paragraph.forEach((line, i) => {
        if (i) p.append(h("br"));
        p.append(inline(line));
      });
      root.append(p);
    }
    paragraph = [];
  };
  const flushList = () => {
    if (list) root.append(list);
    list = null;
  };
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i];
    const fence = line.match(/^```\s*([\w+-]*)\s*$/);
    if (fence) {
      flushParagraph();
      flushList();
      const body = [];
      for (i += 1; i < lines.length && !/^```\s*$/.test(lines[i]); i++) body.push(lines[i]);
      root.append(h("pre", { class: "code-block", "data-lang": fence[1] || null }, h("code", {}, body.join("\n"))));
      continue;
    }
    const heading = line.match(/^(#{1,4})\s+(.*)$/);
    const bullet = line.match(/^\s*[-*]\s+(.*)$/);
    const numbered = line.match(/^\s*\d+[.)]\s+(.*)$/);
    if (heading) {
      flushParagraph();
      flushList();
      root.append(h(`h${Math.min(6, heading[1].length + 2)}`, {}, inline(heading[2])));
    } else if (bullet || numbered) {
      flushParagraph();
      const tag = bullet ? "ul" : "ol";
      if (!list || list.tagName.toLowerCase() !== tag) {
        flushList();
        list = h(tag);
      }
      list.append(h("li", {}, inline((bullet || numbered)[1])));
    } else if (!line.trim()) {
      flushParagraph();
      flushList();
    } else {
      flushList();
      paragraph.push(line);
    }
  }
  flushParagraph();
  flushList();
  return root;
}
