// The "Test tool" console: input as a form generated from the input schema or as raw JSON
// (kept in sync), Send -> POST /api/tools/<name>/execute, the result (status, duration,
// output, validation errors with their JSON paths, logs, isolation), async runs that land
// over the /ws/tool-runs/ websocket, and the run history (click a run to re-open its input).
// For Python tools, a banner on top says how this server isolates their runs: strong,
// weak (the operator's explicit choice), or refused (and why).

import { api, ApiError, listOf } from "./lib/api.js";
import { mountSchemaForm, skeleton } from "./lib/schema_form.js";
import { parseJson } from "./lib/schema_json.js";
import { fill, h } from "./lib/dom.js";
import { formatDuration, formatJson, timeAgo } from "./lib/format.js";
import { isFinal, ToolRunWatcher } from "./lib/tool_runs.js";
import { isKnowledgeResult, renderCitations } from "./lib/citations.js";

const STATUS_LABEL = { completed: "Completed", failed: "Failed", pending: "Pending", running: "Running" };

export function openConsole(slot, tool) {
  const path = `/api/tools/${encodeURIComponent(tool.name)}`;
  const schema = tool.input_schema && Object.keys(tool.input_schema).length ? tool.input_schema : { type: "object" };
  let mode = "form";
  let closed = false;

  // --- input: form and raw JSON --------------------------------------------------------
  const formBox = h("div", { class: "console-form", id: "console-form" });
  const raw = h("textarea", { id: "console-json", class: "code console-json", rows: 12, spellcheck: "false",
    "aria-label": "Input as JSON" });
  const jsonStatus = h("div", { class: "json-status", id: "console-json-status", "aria-live": "polite" });
  const rawBox = h("div", { class: "console-raw", hidden: true }, raw, jsonStatus);
  const form = mountSchemaForm(formBox, schema, { onChange: () => syncRawFromForm() });
  if (!formBox.querySelector("[name]") && !Object.keys(schema.properties || {}).length) {
    formBox.append(h("p", { class: "muted no-input" }, "This tool takes no input: press Send."));
  }
  raw.value = formatJson(form.getValue());
  checkRaw();

  function syncRawFromForm() {
    raw.value = formatJson(form.getValue());
    checkRaw();
  }

  function checkRaw() {
    const parsed = parseJson(raw.value);
    jsonStatus.className = `json-status ${parsed.ok ? "is-ok" : "is-error"}`;
    jsonStatus.textContent = parsed.ok ? "✓ Valid JSON" : `✗ ${parsed.message}`;
    raw.toggleAttribute("aria-invalid", !parsed.ok);
    return parsed;
  }

  raw.addEventListener("input", () => {
    const parsed = checkRaw();
    if (parsed.ok) form.setValue(parsed.value);
  });

  const tabs = ["form", "json"].map((name) => h("button", {
    type: "button", role: "tab", class: "segment", "data-mode": name, id: `console-tab-${name}`,
    onclick: () => setMode(name),
  }, name === "form" ? "Form" : "JSON"));
  const tabNote = h("span", { class: "tab-note error", role: "alert" });

  function setMode(next) {
    tabNote.textContent = "";
    if (next === "form" && mode === "json") {
      const parsed = checkRaw();
      if (!parsed.ok) {
        tabNote.textContent = "Fix the JSON before switching to the form.";
        raw.focus();
        return;
      }
      form.setValue(parsed.value);
    }
    if (next === "json" && mode === "form") syncRawFromForm();
    mode = next;
    formBox.hidden = mode !== "form";
    rawBox.hidden = mode !== "json";
    for (const tab of tabs) tab.setAttribute("aria-selected", String(tab.dataset.mode === mode));
  }

  const reset = h("button", { type: "button", class: "link-button", id: "console-reset", onclick: () => {
    form.setValue(skeleton(schema));
    form.clearHighlights();
    syncRawFromForm();
  } }, "Reset");

  // --- send ----------------------------------------------------------------------------
  const alwaysAsync = tool.execution_mode === "async";
  const asyncBox = h("input", { type: "checkbox", id: "run-async", checked: alwaysAsync, disabled: alwaysAsync });
  const send = h("button", { type: "button", class: "primary", id: "console-send", onclick: () => run() }, "Send");
  const liveDot = h("span", { class: "live-dot", id: "console-live", title: "Connecting to live results…" });

  const result = h("div", { class: "console-result", id: "console-result" },
    h("div", { class: "result-empty" }, h("strong", {}, "No run yet."),
      h("span", { class: "muted" }, " Fill in the input and press Send (Ctrl+Enter).")));

  const historyList = h("ol", { class: "run-history", id: "run-history" });
  const sandbox = tool.kind === "python"
    ? h("div", { class: "sandbox-banner is-loading", id: "console-sandbox", role: "status" },
      "Checking how this server isolates Python code…")
    : null;

  const root = h("section", { class: "console", id: "test-console", "aria-label": "Test console" },
    sandbox,
    h("div", { class: "console-grid" },
      h("div", { class: "console-input" },
        h("div", { class: "console-toolbar" },
          h("div", { class: "segmented", role: "tablist", "aria-label": "Input as" }, tabs),
          tabNote, h("span", { class: "spacer" }), reset),
        formBox, rawBox,
        h("div", { class: "console-send" },
          h("label", { class: "check", for: "run-async", title: alwaysAsync ? "This tool always runs in a worker" : "" },
            asyncBox, " Run async"),
          h("span", { class: "spacer" }), send)),
      h("div", { class: "console-output" },
        h("div", { class: "console-output-head" }, h("h3", {}, "Result"), liveDot), result)),
    h("div", { class: "history-box" }, h("h3", {}, "Run history"), historyList));
  fill(slot, root);
  setMode("form");

  root.addEventListener("keydown", (event) => {
    if (event.key === "Enter" && (event.ctrlKey || event.metaKey)) {
      event.preventDefault();
      run();
    }
  });

  const watcher = new ToolRunWatcher({
    onState: (socketState) => {
      liveDot.classList.toggle("is-live", socketState === "open");
      liveDot.title = socketState === "open" ? "Live: async results arrive as they land" : "Reconnecting… (polling meanwhile)";
      liveDot.dataset.state = socketState;
    },
    onRunState: (state) => {
      const mine = (state.watch && state.watch === watching) || (state.id && state.id === current?.id);
      if (mine) showWaiting(state.note);
    },
  });

  let current = null; // the run shown in the result pane
  let watching = null; // the name sent with the synchronous run under way

  // A run waiting for a sandbox slot says so (and why) until it runs.
  function showWaiting(note) {
    document.getElementById("console-waiting")?.remove();
    if (!note) {
      if (watching) send.textContent = "Running…";
      return;
    }
    if (watching) send.textContent = "Waiting for a slot…";
    result.prepend(h("p", { class: "muted pending-note", id: "console-waiting", role: "status" },
      h("span", { class: "spinner", "aria-hidden": "true" }), " ", note));
  }

  async function run() {
    if (send.disabled) return;
    form.clearHighlights();
    let body;
    if (mode === "json") {
      // Sent as text so the server reports syntax errors with line and column too.
      body = { input_text: raw.value };
    } else {
      body = { input: form.getValue() };
    }
    const async = asyncBox.checked;
    if (!async) {
      watching = `run-${Date.now().toString(36)}-${Math.random().toString(36).slice(2, 10)}`;
      body.watch = watching;
    }
    send.disabled = true;
    send.textContent = async ? "Queuing…" : "Running…";
    result.classList.add("is-busy");
    try {
      const answer = await api(`${path}/execute${async ? "?mode=async" : ""}`, { method: "POST", body });
      show(answer);
    } catch (err) {
      // A refused input may come back as a recorded run or as {detail, errors: [{path}]}.
      if (err instanceof ApiError && err.body && typeof err.body === "object") {
        if (err.body.id && err.body.status) show(err.body);
        else showRefusal(err);
      } else {
        showRefusal(err);
      }
    } finally {
      watching = null;
      document.getElementById("console-waiting")?.remove();
      send.disabled = false;
      send.textContent = "Send";
      result.classList.remove("is-busy");
      loadHistory();
    }
  }

  function show(runData) {
    current = runData;
    renderRun(runData);
    if (!isFinal(runData) && runData.id) {
      watcher.watch(runData.id, (landed, final) => {
        if (closed || current?.id !== landed.id) return;
        current = landed;
        renderRun(landed);
        if (final) loadHistory();
      });
    }
  }

  function errorList(errors) {
    return h("ul", { class: "error-list", id: "console-errors" }, errors.map((e) => h("li", {},
      h("button", { type: "button", class: "error-path", "data-path": e.path || "$", title: "Show in the form",
        onclick: () => { setMode("form"); form.clearHighlights(); form.highlight(e.path || "$", e.message)?.scrollIntoView({ block: "center" }); } },
      h("code", {}, e.path || "$")),
      h("span", { class: "error-message" }, e.message))));
  }

  function highlightAll(errors) {
    form.clearHighlights();
    for (const e of errors) if (e.path) form.highlight(e.path, e.message);
  }

  function showRefusal(err) {
    current = null;
    const errors = Array.isArray(err.body?.errors) ? err.body.errors : [];
    highlightAll(errors);
    fill(result,
      h("div", { class: "result-head" }, h("span", { class: "status status-failed", id: "console-status" }, "Refused"),
        h("span", { class: "muted" }, err.status ? `HTTP ${err.status}` : "")),
      h("p", { class: "result-error", id: "console-error" }, err.message),
      errors.length ? errorList(errors) : null);
  }

  let trail = { id: null, statuses: [] }; // what this run has shown: "pending completed"

  function renderRun(runData) {
    const status = runData.status || "unknown";
    if (trail.id !== runData.id) trail = { id: runData.id, statuses: [] };
    if (trail.statuses.at(-1) !== status) trail.statuses.push(status);
    result.dataset.trail = trail.statuses.join(" ");
    const errors = Array.isArray(runData.errors) ? runData.errors : [];
    if (isFinal(runData)) highlightAll(errors);
    const meta = [
      h("span", { class: "meta", id: "console-duration", title: "Duration" }, formatDuration(runData.duration_ms)),
      h("span", { class: "meta", title: "Mode" }, runData.mode || ""),
      runData.isolation ? h("span", { class: `meta isolation ${isolationClass(runData.isolation)}`, id: "console-isolation",
        title: "How this run's code was isolated" }, `isolation: ${runData.isolation}`) : null,
      runData.via ? h("span", { class: "meta", id: "console-via" }, runData.via === "socket" ? "arrived live" : "fetched") : null,
    ];
    const pending = !isFinal(runData);
    fill(result,
      h("div", { class: "result-head" },
        h("span", { class: `status status-${status}`, id: "console-status", "data-status": status },
          pending ? h("span", { class: "spinner", "aria-hidden": "true" }) : null, STATUS_LABEL[status] || status),
        ...meta,
        h("span", { class: "spacer" }),
        runData.id ? h("code", { class: "run-id muted", title: "Run id" }, String(runData.id).slice(0, 8)) : null),
      pending ? h("p", { class: "muted pending-note" },
        "Queued for a worker. The result appears here when it lands — no need to reload.") : null,
      runData.error ? h("p", { class: "result-error", id: "console-error" }, runData.error) : null,
      errors.length ? errorList(errors) : null,
      isKnowledgeResult(runData.output) ? h("div", { class: "output-block", id: "console-citations" },
        h("div", { class: "output-head" }, h("h4", {}, "Sources")), renderCitations(runData.output)) : null,
      outputBlock("Output", runData.output, "console-output", runData),
      runData.model_output !== undefined && runData.model_output !== null && JSON.stringify(runData.model_output) !== JSON.stringify(runData.output)
        ? outputBlock("Model sees", runData.model_output, "console-model-output", runData) : null,
      runData.logs ? h("details", { class: "logs", open: true },
        h("summary", {}, "Logs"), h("pre", { id: "console-logs" }, runData.logs)) : null);
  }

  function outputBlock(title, value, id, runData) {
    if (value === null || value === undefined) {
      if (id !== "console-output" || !isFinal(runData) || runData.status === "failed") return null;
    }
    return h("div", { class: "output-block" },
      h("div", { class: "output-head" }, h("h4", {}, title),
        h("button", { type: "button", class: "link-button", onclick: (event) => copy(event, value) }, "Copy")),
      h("pre", { class: "json", id }, value === undefined ? "" : formatJson(value)));
  }

  async function copy(event, value) {
    try {
      await navigator.clipboard.writeText(formatJson(value));
      event.target.textContent = "Copied";
    } catch {
      event.target.textContent = "Copy failed";
    }
  }

  // --- history -------------------------------------------------------------------------
  async function loadHistory() {
    let runs;
    try {
      runs = listOf(await api(`${path}/runs/?limit=25`));
    } catch (err) {
      fill(historyList, h("li", { class: "muted" }, `Could not load runs: ${err.message}`));
      return;
    }
    if (closed) return;
    if (!runs.length) {
      fill(historyList, h("li", { class: "muted history-empty" }, "No runs yet."));
      return;
    }
    fill(historyList, ...runs.map((r) => h("li", {},
      h("button", { type: "button", class: `history-row${current?.id === r.id ? " is-current" : ""}`,
        "data-run": r.id, title: "Re-open this input", onclick: () => reopen(r) },
      h("span", { class: `dot dot-${r.status}`, title: r.status }),
      h("code", { class: "history-input" }, historyInput(r.input)),
      h("span", { class: "muted history-meta" }, `${r.mode === "async" ? "async · " : ""}${formatDuration(r.duration_ms)} · ${timeAgo(r.created_at)}`)),
      // A finished run's trace: its one tool span (traces/console.py).
      finished(r) ? h("a", { class: "history-trace small", href: `/traces/tool-runs/${r.id}/` }, "View trace") : null)));
  }

  function finished(runData) {
    return runData.status === "completed" || runData.status === "failed";
  }

  function historyInput(input) {
    if (input === null || input === undefined) return "(no input)";
    return typeof input === "string" ? input.replace(/\s+/g, " ") : JSON.stringify(input);
  }

  function reopen(runData) {
    const input = runData.input;
    if (typeof input === "string") {
      // A run refused at parsing keeps the text as it was typed: re-open it as JSON text.
      raw.value = input;
      const parsed = checkRaw();
      if (parsed.ok) form.setValue(parsed.value);
      setMode("json");
    } else if (input !== null && input !== undefined) {
      form.setValue(input);
      raw.value = formatJson(input);
      checkRaw();
    }
    show(runData);
    for (const row of historyList.querySelectorAll(".history-row")) {
      row.classList.toggle("is-current", row.dataset.run === String(runData.id));
    }
  }

  async function loadSandbox() {
    let status;
    try {
      status = await api("/api/tool-types/python/isolation/");
    } catch (err) {
      if (!closed) fill(sandbox, `Could not ask how this server isolates Python code: ${err.message}`);
      return;
    }
    if (closed) return;
    const level = status.refusal ? "refused" : status.strong ? "strong" : "weak";
    sandbox.className = `sandbox-banner is-${level}`;
    sandbox.dataset.level = level;
    const heading = { strong: "✓ Isolated", weak: "⚠ Weak isolation (the operator's choice)",
      refused: "✕ Python tools are disabled on this server" }[level];
    const timeout = status.limits?.max_timeout ? ` Timeouts up to ${status.limits.max_timeout} s.` : "";
    fill(sandbox, h("strong", { class: "sandbox-level" }, heading),
      h("span", { class: "sandbox-label", id: "console-sandbox-label" },
        level === "refused" ? status.refusal : `${status.label}.${timeout}`));
  }

  if (sandbox) loadSandbox();
  loadHistory();
  (formBox.querySelector("input, select, textarea") || send).focus();

  return {
    close() {
      closed = true;
      watcher.close();
      form.destroy();
      slot.replaceChildren();
    },
  };
}

// A run's isolation line: "bwrap: ..." is strong, "weak: ..." the operator's weak choice.
function isolationClass(isolation) {
  return isolation.startsWith("weak") ? "is-weak" : isolation.startsWith("bwrap") ? "is-strong" : "";
}
