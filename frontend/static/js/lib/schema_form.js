// A form generated from a JSON Schema (the tool input editor of the test console).
//
//   const form = mountSchemaForm(container, schema, { onChange });
//   form.getValue(); form.setValue(value); form.highlight("$.items[0].name", "msg");
//
// Covers strings (enums as selects, formats as input types), numbers, integers, booleans,
// arrays (add/remove), nested objects, optional objects (toggled on/off), defaults, local
// $ref, nullable types; anything else gets a small raw-JSON box so no schema is refused.
// Values the form cannot show (a string typed into a number field through raw JSON, or a
// property the schema does not list) are kept as they are, so switching between the raw
// JSON and the form never loses input.

import { h } from "./dom.js";
import {
  booleanNode, constNode, enumNode, fieldLabel, hint, nextId, numberNode, rawNode, same, stringNode, wrap,
} from "./schema_fields.js";
import { fromPath, normalize, skeleton, toPath } from "./schema_json.js";

// The schema helpers the form is built on, for the pages and tests that import them here.
export { normalize, resolveRef, skeleton } from "./schema_json.js";

// --- nodes: {el, get() -> value | undefined (= omitted), set(value)} ----------------------
function buildNode(schema, keys, ctx, { name = null, required = true } = {}) {
  const s = normalize(schema, ctx.root);
  const path = toPath(keys);
  if ("const" in s) return constNode(s, path, name, required);
  if (Array.isArray(s.enum)) return enumNode(s, path, name, required);
  switch (s.type) {
    case "string": return stringNode(s, path, name, required);
    case "number":
    case "integer": return numberNode(s, path, name, required);
    case "boolean": return booleanNode(s, path, name, required);
    case "object":
      if (!s.properties && s.additionalProperties !== false) return rawNode(s, path, name, required);
      return objectNode(s, keys, ctx, name, required);
    case "array": return arrayNode(s, keys, ctx, name, required);
    case "null": return constNode({ ...s, const: null }, path, name, required);
    default: return rawNode(s, path, name, required);
  }
}

// PostgreSQL's jsonb does not keep key order, but "required" is a list and does: show
// required properties in that order first, then the others as given.
function orderedProperties(s) {
  const entries = Object.entries(s.properties || {});
  const rank = new Map((s.required || []).map((key, i) => [key, i]));
  return entries
    .map((entry, i) => [entry, rank.has(entry[0]) ? rank.get(entry[0]) : 1e6 + i])
    .sort((a, b) => a[1] - b[1])
    .map(([entry]) => entry);
}

function objectNode(s, keys, ctx, name, required) {
  const path = toPath(keys);
  const requiredKeys = new Set(s.required || []);
  const children = [];
  const body = h("div", { class: "sf-props" });
  for (const [key, sub] of orderedProperties(s)) {
    const isRequired = requiredKeys.has(key);
    const subSchema = normalize(sub, ctx.root);
    const node = buildNode(sub, [...keys, key], ctx, { name: key, required: isRequired });
    // Optional nested objects get an on/off switch: off means "leave it out". (Optional
    // arrays are left out while empty.)
    const toggled = !isRequired && subSchema.type === "object" && Boolean(subSchema.properties);
    if (toggled) {
      const id = nextId();
      const box = h("input", { type: "checkbox", id, class: "sf-toggle", "data-toggle": toPath([...keys, key]) });
      const head = h("label", { class: "sf-toggle-label", for: id }, box,
        h("span", {}, `Include `, h("strong", {}, key)));
      const holder = h("div", { class: "sf-optional" }, head, node.el);
      const sync = () => { node.el.hidden = !box.checked; holder.classList.toggle("is-off", !box.checked); };
      box.addEventListener("change", () => {
        if (box.checked && same(node.get(), undefined)) node.set(skeleton(sub, ctx.root));
        sync();
      });
      sync();
      children.push({ key, node, box, sync });
      body.append(holder);
    } else {
      children.push({ key, node });
      body.append(node.el);
    }
  }
  let extras = {};
  const el = keys.length === 0
    ? h("div", { class: "sf-root", "data-path": path }, body)
    : h("fieldset", { class: "sf-field sf-object", "data-path": path },
      h("legend", {}, fieldLabel(name, s, required)), hint(s), body);
  return {
    el,
    get() {
      const out = {};
      for (const { key, node, box } of children) {
        if (box && !box.checked) continue;
        const value = node.get();
        if (value !== undefined) out[key] = value;
      }
      return { ...extras, ...out };
    },
    set(value) {
      const obj = value && typeof value === "object" && !Array.isArray(value) ? value : {};
      const known = new Set(children.map((c) => c.key));
      extras = Object.fromEntries(Object.entries(obj).filter(([k]) => !known.has(k)));
      for (const { key, node, box, sync } of children) {
        if (box) { box.checked = key in obj; sync(); }
        node.set(obj[key]);
      }
    },
  };
}

function arrayNode(s, keys, ctx, name, required) {
  const path = toPath(keys);
  const itemSchema = normalize(s.items, ctx.root);
  // A list of choices from an enum: a group of checkboxes reads better than add/remove.
  if (Array.isArray(itemSchema.enum) && s.uniqueItems !== false && itemSchema.enum.length <= 12) {
    const boxes = itemSchema.enum.map((value) => {
      const id = nextId();
      const box = h("input", { type: "checkbox", id, name: path });
      return { value, box, label: h("label", { class: "sf-check", for: id }, box,
        typeof value === "string" ? value : JSON.stringify(value)) };
    });
    const group = h("div", { class: "sf-checks" }, boxes.map((b) => b.label));
    const el = wrap(s, path, name, required, group);
    return {
      el,
      get: () => {
        const picked = boxes.filter((b) => b.box.checked).map((b) => structuredClone(b.value));
        return picked.length || required ? picked : undefined;
      },
      set(value) {
        const list = Array.isArray(value) ? value : [];
        for (const b of boxes) b.box.checked = list.some((v) => same(v, b.value));
      },
    };
  }
  const list = h("ol", { class: "sf-items" });
  const items = [];
  const addButton = h("button", { type: "button", class: "secondary sf-add", "data-add": path }, "+ Add item");
  const el = h("fieldset", { class: "sf-field sf-array", "data-path": path },
    h("legend", {}, fieldLabel(name, s, required)), hint(s), list, addButton);

  const renumber = () => {
    items.forEach((item, i) => { item.index.textContent = String(i); });
    addButton.disabled = s.maxItems !== undefined && items.length >= s.maxItems;
  };
  const addItem = (value) => {
    const position = items.length;
    const node = buildNode(s.items, [...keys, position], ctx, { name: null, required: true });
    const index = h("span", { class: "sf-index" }, String(position));
    const remove = h("button", { type: "button", class: "sf-remove", title: "Remove item",
      "aria-label": "Remove item" }, "×");
    const li = h("li", { class: "sf-item" }, index, node.el, remove);
    const item = { node, li, index };
    remove.addEventListener("click", () => {
      // Rebuilt from the remaining values so that every data-path index stays right.
      const values = items.map((it) => it.node.get());
      values.splice(items.indexOf(item), 1);
      arrayField.set(values);
      ctx.changed();
    });
    items.push(item);
    list.append(li);
    node.set(value);
    renumber();
  };
  addButton.addEventListener("click", () => {
    addItem(skeleton(s.items, ctx.root));
    ctx.changed();
  });
  const arrayField = {
    el,
    get: () => {
      if (!items.length && !required) return undefined;
      return items.map((item) => item.node.get()).map((v) => (v === undefined ? null : v));
    },
    set(value) {
      // Rebuilt from scratch so that data-path indexes stay right for highlighting.
      for (const item of items.splice(0)) item.li.remove();
      (Array.isArray(value) ? value : []).forEach(addItem);
      renumber();
    },
  };
  return arrayField;
}

// --- the form ------------------------------------------------------------------------------
export function mountSchemaForm(container, schema, { onChange = () => {} } = {}) {
  const root = schema && typeof schema === "object" ? schema : {};
  const ctx = { root, changed: () => onChange() };
  const node = buildNode(root, [], ctx, { name: null, required: true });
  container.replaceChildren(node.el);
  const listener = () => onChange();
  container.addEventListener("input", listener);
  container.addEventListener("change", listener);
  node.set(skeleton(root));

  function clearHighlights() {
    container.querySelectorAll(".sf-error").forEach((el) => el.classList.remove("sf-error"));
    container.querySelectorAll(".sf-error-msg").forEach((el) => el.remove());
  }

  // Mark the field at a JSON path (or its nearest shown ancestor) with a message.
  function highlight(path, message) {
    let keys = fromPath(path);
    // "'city' is a required property" is reported on the object: point at the property.
    const missing = /^'([^']+)' is a required property/.exec(message || "");
    if (missing) keys = [...keys, missing[1]];
    for (let n = keys.length; n >= 0; n--) {
      const target = toPath(keys.slice(0, n));
      const field = [...container.querySelectorAll("[data-path]")].find((el) => el.dataset.path === target);
      if (!field || field.closest("[hidden]")) continue;
      field.classList.add("sf-error");
      const msg = h("div", { class: "sf-error-msg" }, message);
      const legend = field.querySelector(":scope > legend, :scope > label");
      (legend || field.firstChild)?.after(msg);
      return field;
    }
    return null;
  }

  return {
    getValue: () => node.get(),
    setValue: (value) => { node.set(value); },
    highlight,
    clearHighlights,
    destroy() {
      container.removeEventListener("input", listener);
      container.removeEventListener("change", listener);
      container.replaceChildren();
    },
  };
}

