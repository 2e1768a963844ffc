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

import { fromPath, parseJson, toPath } from "./schema_json.js";
import { h } from "./tool_dom.js";

// --- schema helpers ------------------------------------------------------------------------
export function resolveRef(schema, root) {
  let current = schema;
  for (let depth = 0; current && typeof current === "object" && current.$ref && depth < 20; depth++) {
    const ref = current.$ref;
    if (!ref.startsWith("#")) return {};
    let target = root;
    for (const part of ref.slice(1).split("/").filter(Boolean)) {
      target = target?.[part.replace(/~1/g, "/").replace(/~0/g, "~")];
    }
    const { $ref, ...rest } = current;
    current = { ...(target || {}), ...rest };
  }
  return current;
}

// One effective schema for a node: $ref resolved, allOf merged, "nullable" unions reduced.
export function normalize(schema, root) {
  if (schema === true || schema === undefined || schema === null) return { nullable: false };
  if (schema === false) return { type: "never" };
  let s = resolveRef(schema, root);
  if (Array.isArray(s.allOf)) {
    const merged = { ...s };
    delete merged.allOf;
    for (const part of s.allOf) {
      const p = normalize(part, root);
      merged.properties = { ...(merged.properties || {}), ...(p.properties || {}) };
      merged.required = [...(merged.required || []), ...(p.required || [])];
      for (const [k, v] of Object.entries(p)) if (!(k in merged)) merged[k] = v;
    }
    s = merged;
  }
  let nullable = false;
  for (const key of ["anyOf", "oneOf"]) {
    if (Array.isArray(s[key])) {
      const rest = s[key].filter((alt) => resolveRef(alt, root)?.type !== "null");
      if (rest.length === 1) {
        nullable = rest.length !== s[key].length;
        const { [key]: _drop, ...others } = s;
        s = { ...others, ...normalize(rest[0], root) };
      }
    }
  }
  if (Array.isArray(s.type)) {
    const types = s.type.filter((t) => t !== "null");
    nullable = nullable || types.length !== s.type.length;
    s = { ...s, type: types.length === 1 ? types[0] : undefined };
  }
  if (!s.type) {
    if (s.properties) s = { ...s, type: "object" };
    else if (s.items) s = { ...s, type: "array" };
    else if (Array.isArray(s.enum) && s.enum.every((v) => typeof v === "string")) s = { ...s, type: "string" };
  }
  return { ...s, nullable: nullable || Boolean(s.nullable) };
}

// A value shaped like the schema: defaults, required properties, first enum values.
export function skeleton(schema, root = schema, depth = 0) {
  const s = normalize(schema, root);
  if ("default" in s) return structuredClone(s.default);
  if ("const" in s) return structuredClone(s.const);
  if (Array.isArray(s.enum) && s.enum.length) return structuredClone(s.enum[0]);
  if (depth > 12) return null;
  switch (s.type) {
    case "object": {
      const out = {};
      const required = new Set(s.required || []);
      for (const [key, sub] of Object.entries(s.properties || {})) {
        const subSchema = normalize(sub, root);
        if (required.has(key) || "default" in subSchema) out[key] = skeleton(sub, root, depth + 1);
      }
      return out;
    }
    case "array": {
      const count = Math.max(0, Math.min(s.minItems || 0, 20));
      return Array.from({ length: count }, () => skeleton(s.items, root, depth + 1));
    }
    case "string": return "";
    case "number": return s.minimum ?? 0;
    case "integer": return s.minimum ?? 0;
    case "boolean": return false;
    case "null": return null;
    default: return s.nullable ? null : {};
  }
}

// --- DOM helpers ---------------------------------------------------------------------------
const same = (a, b) => JSON.stringify(a) === JSON.stringify(b);
let uid = 0;
const nextId = () => `sf-${++uid}`;

function fieldLabel(name, s, required) {
  const title = s.title && s.title !== name ? s.title : null;
  return [
    // Array items (name null) are numbered beside the field instead.
    name === null ? null : h("span", { class: "sf-name" }, String(name)),
    required && name !== null ? h("span", { class: "sf-req", title: "required" }, "*") : null,
    title ? h("span", { class: "sf-title" }, title) : null,
    h("span", { class: "sf-type" }, describeType(s)),
  ];
}

function describeType(s) {
  if (Array.isArray(s.enum)) return "enum";
  const base = s.type === "array" && s.items ? `array` : s.type || "any";
  return s.nullable ? `${base} | null` : base;
}

function hint(s) {
  const bits = [];
  if (s.description) bits.push(s.description);
  if (s.minimum !== undefined) bits.push(`≥ ${s.minimum}`);
  if (s.maximum !== undefined) bits.push(`≤ ${s.maximum}`);
  if (s.minLength) bits.push(`min length ${s.minLength}`);
  if (s.maxLength) bits.push(`max length ${s.maxLength}`);
  if (s.pattern) bits.push(`pattern ${s.pattern}`);
  return bits.length ? h("div", { class: "sf-hint" }, bits.join(" · ")) : null;
}

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

function wrap(s, path, name, required, control, extra = null) {
  const el = h("div", { class: `sf-field sf-${s.type || "any"}`, "data-path": path },
    h("label", { class: "sf-label", for: control?.id }, fieldLabel(name, s, required)),
    control, extra, hint(s));
  return el;
}

// "Foreign" values came from raw JSON and do not fit the control (e.g. "abc" for a number):
// they are kept and sent as they are until the user edits the field.
function foreignNote(el) {
  const note = h("div", { class: "sf-foreign", hidden: true });
  el.append(note);
  return {
    show(value, why) {
      note.hidden = false;
      note.textContent = `From raw JSON: ${JSON.stringify(value)} (${why}); edit the field to replace it.`;
    },
    hide() { note.hidden = true; },
  };
}

// A node over one control: read()/write() talk to the control; values it does not
// accept are kept as foreign values (above).
function controlNode(el, control, event, { read, write, accepts, why, quiet = () => false }) {
  const note = foreignNote(el);
  let kept;
  control.addEventListener(event, () => { kept = undefined; note.hide(); });
  return {
    el,
    get: () => (kept !== undefined ? kept.value : read()),
    set(value) {
      kept = undefined;
      note.hide();
      if (accepts(value)) {
        write(value);
      } else {
        write(undefined);
        kept = { value };
        // null in a nullable field is valid: kept, but nothing to warn about.
        if (!quiet(value)) note.show(value, why);
      }
    },
  };
}

function constNode(s, path, name, required) {
  const el = wrap(s, path, name, required, h("code", { class: "sf-const" }, JSON.stringify(s.const)));
  return { el, get: () => structuredClone(s.const), set() {} };
}

function enumNode(s, path, name, required) {
  const select = h("select", { id: nextId(), name: path });
  const optional = !required || s.nullable;
  // Left empty, an optional value takes the schema's default (the tool applies it).
  const emptyLabel = required ? "null" : "default" in s ? `— default: ${JSON.stringify(s.default)} —` : "— not set —";
  if (optional) select.append(h("option", { value: "" }, emptyLabel));
  s.enum.forEach((value, i) => select.append(h("option", { value: String(i) },
    typeof value === "string" ? value : JSON.stringify(value))));
  const indexOf = (value) => s.enum.findIndex((v) => same(v, value));
  return controlNode(wrap(s, path, name, required, select), select, "change", {
    read: () => {
      if (select.value === "") return required ? null : undefined;
      return structuredClone(s.enum[Number(select.value)]);
    },
    write: (value) => {
      const index = indexOf(value);
      select.value = index >= 0 ? String(index) : optional ? "" : "0";
    },
    accepts: (value) => value === undefined || (value === null && optional) || indexOf(value) >= 0,
    why: "not one of the choices",
  });
}

const FORMAT_INPUT = { email: "email", uri: "url", url: "url", date: "date", time: "time" };

function stringNode(s, path, name, required) {
  const id = nextId();
  // Code bodies and templates need room and a monospace font.
  const code = ["code", "python"].includes(s.format) || /python|javascript/.test(s.contentMediaType || "")
    || s["x-widget"] === "code" || name === "code";
  const long = code || ["textarea", "multiline"].includes(s.format) || s["x-widget"] === "textarea"
    || (s.maxLength || 0) > 200 || Boolean(s.contentMediaType);
  const input = long
    ? h("textarea", { id, name: path, rows: code ? 12 : 3, class: code ? "code" : null, spellcheck: code ? "false" : null })
    : h("input", { id, name: path, type: FORMAT_INPUT[s.format] || "text", autocomplete: "off" });
  if (s.examples?.length) input.placeholder = String(s.examples[0]);
  else if (s.format) input.placeholder = s.format;
  return controlNode(wrap(s, path, name, required, input), input, "input", {
    read: () => (input.value === "" && !required ? undefined : input.value),
    write: (value) => { input.value = typeof value === "string" ? value : ""; },
    accepts: (value) => value === undefined || typeof value === "string",
    why: "not a string",
    quiet: (value) => value === null && s.nullable,
  });
}

function numberNode(s, path, name, required) {
  const input = h("input", {
    id: nextId(), name: path, type: "number", inputmode: s.type === "integer" ? "numeric" : "decimal",
    step: s.type === "integer" ? (s.multipleOf || 1) : (s.multipleOf || "any"),
    min: s.minimum, max: s.maximum,
  });
  return controlNode(wrap(s, path, name, required, input), input, "input", {
    read: () => {
      if (input.value === "") return required && s.nullable ? null : undefined;
      const n = Number(input.value);
      // An unparsable entry is sent as text so the server names the field's error.
      return Number.isFinite(n) ? n : input.value;
    },
    write: (value) => { input.value = typeof value === "number" ? String(value) : ""; },
    accepts: (value) => value === undefined || value === null || typeof value === "number",
    why: `not a${s.type === "integer" ? "n integer" : " number"}`,
  });
}

function booleanNode(s, path, name, required) {
  const id = nextId();
  // An optional boolean without a default needs a third state: "not set".
  if (!required && !("default" in s)) {
    const select = h("select", { id, name: path },
      h("option", { value: "" }, "— not set —"), h("option", { value: "true" }, "true"),
      h("option", { value: "false" }, "false"));
    return controlNode(wrap(s, path, name, required, select), select, "change", {
      read: () => (select.value === "" ? undefined : select.value === "true"),
      write: (value) => { select.value = value === true ? "true" : value === false ? "false" : ""; },
      accepts: (value) => value === undefined || typeof value === "boolean",
      why: "not a boolean",
    });
  }
  const box = h("input", { id, name: path, type: "checkbox" });
  const el = h("div", { class: "sf-field sf-boolean", "data-path": path },
    h("label", { class: "sf-check", for: id }, box, fieldLabel(name, s, required)), hint(s));
  return controlNode(el, box, "change", {
    read: () => box.checked,
    write: (value) => { box.checked = Boolean(value ?? s.default); },
    accepts: (value) => value === undefined || typeof value === "boolean",
    why: "not a boolean",
  });
}

// Free-form values (no usable schema): a small JSON box with its own syntax check.
function rawNode(s, path, name, required) {
  const id = nextId();
  const area = h("textarea", { id, name: path, rows: 2, class: "code", spellcheck: "false",
    placeholder: s.type === "object" ? "{ }" : "JSON value" });
  const problem = h("div", { class: "sf-problem", hidden: true });
  const el = wrap(s, path, name, required, area, problem);
  const check = () => {
    if (!area.value.trim()) { problem.hidden = true; return undefined; }
    const parsed = parseJson(area.value);
    problem.hidden = parsed.ok;
    problem.textContent = parsed.ok ? "" : parsed.message;
    return parsed;
  };
  area.addEventListener("input", check);
  return {
    el,
    get() {
      const parsed = check();
      if (!parsed) return required ? null : undefined;
      return parsed.ok ? parsed.value : area.value;
    },
    set(value) {
      area.value = value === undefined ? "" : JSON.stringify(value, null, 1).replace(/\n\s*/g, " ");
      check();
    },
  };
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
      const msg = document.createElement("div");
      msg.className = "sf-error-msg";
      msg.textContent = message;
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
