// The one DOM builder of every page: elements from a tag, attributes and children, with
// text always inserted as text nodes. Tool outputs, model text and user input reach the
// page only through here (or textContent), never through innerHTML.
//
//   h("a", { class: "chip", href, dataset: { key }, onclick: fn }, "text", child, [more])
//
// Attributes: null, undefined and false are left out; true sets an empty attribute;
// `class` and `dataset` (an object) are shorthands; `on<event>` takes a function only (a
// string would be inline script); `value` and `checked` are set as properties once the
// children are in (a <select> needs its options first; a <textarea> has no value
// attribute).

const PROPERTIES = new Set(["value", "checked"]);

const absent = (value) => value === null || value === undefined || value === false;

// A child as a node: nodes as they are, anything else as a text node.
function nodeOf(child) {
  return child instanceof Node ? child : document.createTextNode(String(child));
}

// The children to insert: nested arrays flattened, absent values skipped.
function childNodes(children) {
  return children.flat(Infinity).filter((child) => !absent(child)).map(nodeOf);
}

export function h(tag, attrs = {}, ...children) {
  const node = document.createElement(tag);
  const properties = [];
  for (const [key, value] of Object.entries(attrs || {})) {
    if (absent(value)) continue;
    if (key === "class") node.className = value;
    else if (key === "dataset") Object.assign(node.dataset, value);
    else if (key.startsWith("on")) {
      if (typeof value === "function") node.addEventListener(key.slice(2), value);
    } else if (PROPERTIES.has(key)) properties.push([key, value]);
    else node.setAttribute(key, value === true ? "" : String(value));
  }
  node.append(...childNodes(children));
  for (const [key, value] of properties) node[key] = value;
  return node;
}

// Replaces the children of `node` (absent values skipped, unlike the native
// replaceChildren, which would print "null"); returns the node.
export function fill(node, ...children) {
  node.replaceChildren(...childNodes(children));
  return node;
}
