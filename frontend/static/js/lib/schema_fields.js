// The fields of a schema form (lib/schema_form.js) for one value each: constants, enums,
// strings, numbers, booleans and raw JSON. A field is {el, get() -> value | undefined
// (= omitted), set(value)}; a value its control cannot show (from raw JSON) is kept and
// sent as it is until the user edits the field.

import { h } from "./dom.js";
import { parseJson } from "./schema_json.js";

export const same = (a, b) => JSON.stringify(a) === JSON.stringify(b);
let uid = 0;
export const nextId = () => `sf-${++uid}`;

export function fieldLabel(name, s, required) {
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

export function hint(s) {
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

export function wrap(s, path, name, required, control, extra = null) {
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

export function constNode(s, path, name, required) {
  const el = wrap(s, path, name, required, h("code", { class: "sf-const" }, JSON.stringify(s.const)));
  return { el, get: () => structuredClone(s.const), set() {} };
}

export function enumNode(s, path, name, required) {
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

export function stringNode(s, path, name, required) {
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

export function numberNode(s, path, name, required) {
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

export function booleanNode(s, path, name, required) {
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
export function rawNode(s, path, name, required) {
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
