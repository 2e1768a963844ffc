// Tiny DOM helpers shared by the tool panel modules: build elements without innerHTML.

export function h(tag, attrs = {}, ...children) {
  const el = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs || {})) {
    if (value === undefined || value === null || value === false) continue;
    if (key === "class") el.className = value;
    else if (key === "text") el.textContent = value;
    else if (key === "dataset") Object.assign(el.dataset, value);
    else if (key.startsWith("on")) el.addEventListener(key.slice(2), value);
    else if (key === "value" || key === "checked") el[key] = value;
    else el.setAttribute(key, value === true ? "" : value);
  }
  for (const child of children.flat()) {
    if (child !== null && child !== undefined && child !== false) {
      el.append(child instanceof Node ? child : document.createTextNode(String(child)));
    }
  }
  return el;
}

// replaceChildren() that skips null/false (the native one would print "null").
export function fill(el, ...children) {
  el.replaceChildren(...children.flat().filter((c) => c !== null && c !== undefined && c !== false));
  return el;
}

export function pretty(value) {
  return value === undefined ? "" : JSON.stringify(value, null, 2);
}

const SCHEMA_KEY_ORDER = ["$schema", "$id", "title", "type", "description", "properties", "items",
  "required", "enum", "const", "default"];

// A JSON Schema as a person wrote it: PostgreSQL's jsonb stores object keys sorted by
// length, so put the usual keywords first and properties in their "required" order.
export function orderSchema(schema) {
  if (Array.isArray(schema)) return schema.map(orderSchema);
  if (!schema || typeof schema !== "object") return schema;
  const rank = (key) => (SCHEMA_KEY_ORDER.includes(key) ? SCHEMA_KEY_ORDER.indexOf(key) : SCHEMA_KEY_ORDER.length);
  const out = {};
  for (const key of Object.keys(schema).sort((a, b) => rank(a) - rank(b))) {
    out[key] = key === "properties" && schema.properties && typeof schema.properties === "object"
      ? orderProperties(schema.properties, schema.required)
      : orderSchema(schema[key]);
  }
  return out;
}

function orderProperties(properties, required) {
  const first = (Array.isArray(required) ? required : []).filter((key) => key in properties);
  const keys = [...first, ...Object.keys(properties).filter((key) => !first.includes(key))];
  return Object.fromEntries(keys.map((key) => [key, orderSchema(properties[key])]));
}

const SHORT_KIND = {
  code: "Code", python: "Python", http: "HTTP", openapi: "OpenAPI", mcp: "MCP", a2a: "A2A",
  agent: "Agent", client: "Client", system: "System",
};

export const kindLabel = (kind) => SHORT_KIND[kind] || kind;
