// Client function tools: tools whose code runs in the browser (docs/runs.md).
//
// When a run calls a client tool, the page looks the function up here by the name the
// tool's config gives (`function`), falling back to the tool name, runs it with the
// call's input, and sends `{type: "client-tool-result", toolCallId, output | error}`.
// Register your own with `registerClientTool("name", async (input, ctx) => output)`.

const registry = new Map();

export function registerClientTool(name, fn, { description = "" } = {}) {
  if (typeof fn !== "function") throw new TypeError(`client tool ${name}: not a function`);
  registry.set(name, { fn, description });
}

export function unregisterClientTool(name) {
  registry.delete(name);
}

export function clientToolNames() {
  return [...registry.keys()].sort();
}

export function hasClientTool(name) {
  return registry.has(name);
}

// Runs a registered function; always resolves to {output} or {error} (never throws), so
// the run gets an answer even when the function is missing or fails.
export async function runClientTool(name, input, context = {}) {
  const entry = registry.get(name);
  if (!entry) {
    return { error: `No client function named "${name}" is registered in this browser (known: ${clientToolNames().join(", ") || "none"}).` };
  }
  try {
    const output = await entry.fn(input ?? {}, context);
    return { output: output === undefined ? null : output };
  } catch (error) {
    return { error: `${name} failed: ${error && error.message ? error.message : String(error)}` };
  }
}

// Built-in functions, handy for trying client tools without writing any JS.
registerClientTool("browser_info", () => ({
  userAgent: navigator.userAgent,
  language: navigator.language,
  languages: [...(navigator.languages || [])],
  timezone: Intl.DateTimeFormat().resolvedOptions().timeZone,
  viewport: { width: window.innerWidth, height: window.innerHeight },
  online: navigator.onLine,
}), { description: "The browser's language, time zone and viewport." });

registerClientTool("local_time", () => {
  const now = new Date();
  return {
    iso: now.toISOString(),
    local: now.toLocaleString(),
    timezone: Intl.DateTimeFormat().resolvedOptions().timeZone,
    utcOffsetMinutes: -now.getTimezoneOffset(),
  };
}, { description: "The user's local date, time and time zone." });

registerClientTool("page_selection", () => ({ text: String(window.getSelection ? window.getSelection() : "") }),
  { description: "The text the user has selected on the page." });

registerClientTool("random_number", (input) => {
  const min = Number(input.min ?? 0);
  const max = Number(input.max ?? 100);
  if (!(max >= min)) throw new Error("max must be at least min");
  return { value: Math.floor(min + Math.random() * (max - min + 1)) };
}, { description: "A random integer between min and max (inclusive)." });
