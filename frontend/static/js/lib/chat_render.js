// DOM helpers of the chat page: element building, safe light markdown, value formatting.

export function el(tag, attrs = {}, ...children) {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs || {})) {
    if (value === undefined || value === null || value === false) continue;
    if (key === "class") node.className = value;
    else if (key === "text") node.textContent = value;
    else if (key === "dataset") Object.assign(node.dataset, value);
    else if (key.startsWith("on") && typeof value === "function") node.addEventListener(key.slice(2), value);
    else if (value === true) node.setAttribute(key, "");
    else node.setAttribute(key, String(value));
  }
  for (const child of children.flat()) {
    if (child === undefined || child === null || child === false) continue;
    node.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return node;
}

export function formatJson(value) {
  if (value === undefined) return "";
  try {
    return JSON.stringify(value, null, 2);
  } catch {
    return String(value);
  }
}

// A value as a node: strings as text, everything else as pretty JSON.
export function valueNode(value) {
  if (typeof value === "string") return el("div", { class: "value-text" }, value);
  return el("pre", { class: "value-json" }, formatJson(value));
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
    if (match[1]) out.append(el("code", {}, token.slice(1, -1)));
    else if (match[2]) out.append(el("strong", {}, token.slice(2, -2)));
    else if (match[3]) out.append(el("em", {}, token.slice(1, -1)));
    else out.append(el("a", { href: match[5], target: "_blank", rel: "noopener noreferrer" }, token.slice(1, token.indexOf("]"))));
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
      const p = el("p");
      paragraph.forEach((line, i) => {
        if (i) p.append(el("br"));
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
      root.append(el("pre", { class: "code-block", "data-lang": fence[1] || null }, el("code", {}, body.join("\n"))));
      continue;
    }
    const heading = line.match(/^(#{1,4})\s+(.*)$/);
    const bullet = line.match(/^\s*[-*]\s+(.*)$/);
    const numbered = line.match(/^\s*\d+[.)]\s+(.*)$/);
    if (heading) {
      flushParagraph();
      flushList();
      root.append(el(`h${Math.min(6, heading[1].length + 2)}`, {}, inline(heading[2])));
    } else if (bullet || numbered) {
      flushParagraph();
      const tag = bullet ? "ul" : "ol";
      if (!list || list.tagName.toLowerCase() !== tag) {
        flushList();
        list = el(tag);
      }
      list.append(el("li", {}, inline((bullet || numbered)[1])));
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
