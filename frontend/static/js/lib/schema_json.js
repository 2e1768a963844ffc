// JSON text and JSON paths: parse with line and column, check the shape of a JSON Schema
// while it is typed, and convert between "$.a[0].b" paths and key lists.

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
