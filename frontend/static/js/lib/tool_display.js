// How tools read on the pages: a kind's short label, and a JSON Schema in the order a
// person wrote it.

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
  agent: "Agent", client: "Client", system: "System", widget: "Widget",
};

export const kindLabel = (kind) => SHORT_KIND[kind] || kind;
