// JSON text, JSON paths and JSON Schemas, without any DOM: parse with line and column,
// check the shape of a schema while it is typed, convert between "$.a[0].b" paths and key
// lists, and read a schema node as the form generator needs it ($ref resolved, allOf
// merged, nullable unions reduced) or as a value shaped like it.

// Parse JSON text; on a syntax error say where (1-based line and column), like the server.
export function parseJson(text) {
  if (!text.trim()) return { ok: false, message: "Empty input: type a JSON value.", line: 1, column: 1 };
  try {
    return { ok: true, value: JSON.parse(text) };
  } catch (err) {
    const position = errorPosition(err.message, text);
    const { line, column } = lineColumn(text, position);
    // Chromium's messages name the offending character and position; keep its first part.
    const reason = err.message.replace(/\s*in JSON at position \d+.*$/s, "").replace(/^JSON\.parse: /, "");
    return { ok: false, message: `${reason} (line ${line}, column ${column})`, line, column, position };
  }
}

function errorPosition(message, text) {
  const pos = message.match(/position (\d+)/);
  if (pos) return Number(pos[1]);
  const lc = message.match(/line (\d+) column (\d+)/);
  if (lc) return offsetOf(text, Number(lc[1]), Number(lc[2]));
  return text.length; // "Unexpected end of JSON input"
}

export function lineColumn(text, position) {
  const before = text.slice(0, position);
  const lines = before.split("\n");
  return { line: lines.length, column: lines[lines.length - 1].length + 1 };
}

function offsetOf(text, line, column) {
  const lines = text.split("\n");
  let offset = 0;
  for (let i = 0; i < line - 1 && i < lines.length; i++) offset += lines[i].length + 1;
  return offset + column - 1;
}

const TYPES = new Set(["object", "array", "string", "number", "integer", "boolean", "null"]);

// Quick structural checks of a JSON Schema (the server's full check runs on save).
// Returns a list of {path, message}; empty when nothing looks wrong.
export function schemaProblems(schema, path = "$") {
  const problems = [];
  if (typeof schema === "boolean") return problems;
  if (schema === null || typeof schema !== "object" || Array.isArray(schema)) {
    return [{ path, message: "A schema must be a JSON object." }];
  }
  if ("type" in schema) {
    const types = Array.isArray(schema.type) ? schema.type : [schema.type];
    for (const t of types) {
      if (!TYPES.has(t)) problems.push({ path: `${path}.type`, message: `Unknown type ${JSON.stringify(t)}.` });
    }
  }
  if ("properties" in schema) {
    if (!isObject(schema.properties)) {
      problems.push({ path: `${path}.properties`, message: "\"properties\" must be an object." });
    } else {
      for (const [key, sub] of Object.entries(schema.properties)) {
        problems.push(...schemaProblems(sub, `${path}.properties${pathKey(key)}`));
      }
    }
  }
  if ("required" in schema) {
    const ok = Array.isArray(schema.required) && schema.required.every((r) => typeof r === "string");
    if (!ok) problems.push({ path: `${path}.required`, message: "\"required\" must be a list of property names." });
  }
  if ("items" in schema) problems.push(...schemaProblems(schema.items, `${path}.items`));
  if ("enum" in schema && (!Array.isArray(schema.enum) || schema.enum.length === 0)) {
    problems.push({ path: `${path}.enum`, message: "\"enum\" must be a non-empty list." });
  }
  return problems;
}

function isObject(value) {
  return value !== null && typeof value === "object" && !Array.isArray(value);
}

function pathKey(key) {
  return /^[A-Za-z_][A-Za-z0-9_]*$/.test(key) ? `.${key}` : `[${JSON.stringify(key)}]`;
}

// ["a", 0, "b"] -> "$.a[0].b"
export function toPath(keys) {
  return "$" + keys.map((k) => (typeof k === "number" ? `[${k}]` : pathKey(k))).join("");
}

// "$.a[0].b" / "$['a'][0]" / "a.0.b" -> ["a", 0, "b"]
export function fromPath(path) {
  const keys = [];
  const re = /\.([^.[\]]+)|\[(\d+)\]|\[(["'])((?:\\.|(?!\3).)*)\3\]/g;
  let text = String(path || "").trim();
  if (text.startsWith("$")) text = text.slice(1);
  else if (text && !text.startsWith(".") && !text.startsWith("[")) text = "." + text;
  let match;
  while ((match = re.exec(text)) !== null) {
    if (match[1] !== undefined) keys.push(/^\d+$/.test(match[1]) ? Number(match[1]) : match[1]);
    else if (match[2] !== undefined) keys.push(Number(match[2]));
    else keys.push(match[4].replace(/\\(.)/g, "$1"));
  }
  return keys;
}

// The snake_case a tool name must be, from whatever the user typed.
export function toSnakeCase(text) {
  return text.replace(/[\s-]+/g, "_").toLowerCase();
}

export const TOOL_NAME_RE = /^[a-z][a-z0-9_]*$/;

// --- schema nodes --------------------------------------------------------------------------
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

