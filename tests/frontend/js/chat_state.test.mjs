// The chat's conversation model (frontend/static/js/lib/chat_state.js), fed event sequences
// as the thread's stream delivers them, without a browser. Run by tests/frontend/test_js_units.py
// (`node --test tests/frontend/js/`).

import assert from "node:assert/strict";
import { describe, test } from "node:test";

import { ChatState } from "../../../frontend/static/js/lib/chat_state.js";
import { ThreadStream } from "../../../frontend/static/js/lib/stream.js";

// --- helpers ---------------------------------------------------------------------------------
function numbered(events, first = 1) {
  return events.map((event, i) => ({ seq: first + i, ...event }));
}

function play(events, options = {}) {
  const state = new ChatState(options);
  const changes = events.map((event) => state.apply(event));
  return { state, changes };
}

// The parts of the model a reader of the page sees, as plain data.
function snapshot(state) {
  return {
    messages: state.messages.map(({ text, runId, status }) => ({ text, runId, status })),
    timeline: state.timeline.map((item) => item.id ?? item.tag),
    runs: [...state.runs.values()].map((run) => ({
      id: run.id, status: run.status, detail: run.detail, steps: run.steps, usage: run.usage,
      parts: run.parts.map((part) => (part.type === "text" ? `text:${part.text}` : `${part.type}:${part.id ?? part.tag}`)),
    })),
    calls: [...state.calls.values()].map((call) => ({
      id: call.id, status: call.status, note: call.note, value: call.value, hidden: call.hidden,
      raw: call.raw.join(""), hooks: call.hooks.length, outcome: call.outcome, widget: call.widget?.kind ?? null,
    })),
    suspended: [...state.suspended.keys()],
    activeRunId: state.activeRunId,
    tasks: state.tasks,
  };
}

const types = (changes) => changes.map((c) => (c.type === "call" ? `call:${c.aspect}` : c.type));

// A run that writes text, calls save_note with a streamed argument, and finishes.
const TOOL_RUN = numbered([
  { type: "run-start", runId: "r1", message: "Save a note" },
  { type: "text-delta", runId: "r1", delta: "Saving " },
  { type: "text-delta", runId: "r1", delta: "it." },
  { type: "tool-input-start", runId: "r1", toolCallId: "c1", toolName: "save_note" },
  { type: "tool-input-delta", runId: "r1", toolCallId: "c1", argsTextDelta: '{"text": "wa',
    patches: [{ op: "set", path: [], value: {} }, { op: "set", path: ["text"], value: "wa" }] },
  { type: "tool-input-delta", runId: "r1", toolCallId: "c1", argsTextDelta: 'ter"}',
    patches: [{ op: "append", path: ["text"], value: "ter" }] },
  { type: "tool-input-end", runId: "r1", toolCallId: "c1" },
  { type: "tool-call", runId: "r1", toolCallId: "c1", toolName: "save_note", input: { text: "water" } },
  { type: "tool-result", runId: "r1", toolCallId: "c1", toolName: "save_note", output: { saved: 5 }, durationMs: 12 },
  { type: "step-finish", runId: "r1" },
  { type: "text-delta", runId: "r1", delta: "Done." },
  { type: "run-finish", runId: "r1", finishReason: "stop", steps: 2, usage: { total_tokens: 42 }, model: "openai/gpt-4o-mini" },
]);

const EXPECTED_TOOL_RUN = {
  messages: [{ text: "Save a note", runId: "r1", status: "sent" }],
  timeline: ["m1", "r1"],
  runs: [{ id: "r1", status: "completed", detail: "", steps: 1, usage: { total_tokens: 42 },
    parts: ["text:Saving it.", "call:c1", "text:Done."] }],
  calls: [{ id: "c1", status: "completed", note: null, value: { text: "water" }, hidden: false,
    raw: '{"text": "water"}', hooks: 0, widget: null,
    outcome: { kind: "result", output: { saved: 5 }, modelOutput: undefined, durationMs: 12, hidden: false } }],
  suspended: [],
  activeRunId: null,
  tasks: [],
};

// --- sequences -------------------------------------------------------------------------------
describe("a run with text and a tool call", () => {
  test("builds the conversation", () => {
    const { state } = play(TOOL_RUN);
    assert.deepEqual(snapshot(state), EXPECTED_TOOL_RUN);
    assert.deepEqual(state.runs.get("r1").finish,
      { steps: 2, usage: { total_tokens: 42 }, finishReason: "stop", model: "openai/gpt-4o-mini" });
  });

  test("reports each change for the view, in order", () => {
    const { changes } = play(TOOL_RUN);
    assert.deepEqual(changes.map(types), [
      ["message", "run", "run-status"],
      ["text"],
      ["text"],
      ["segment-end", "call:created"],
      ["call:raw", "call:input"],
      ["call:raw", "call:input"],
      ["call:status"],
      ["call:input", "call:status"],
      ["call:status", "call:outcome"],
      [], // the step ends after the call: no text segment is open
      ["text"],
      ["segment-end", "run-status"],
    ]);
    assert.deepEqual(changes[5][1].patches, [{ op: "append", path: ["text"], value: "ter" }]);
  });

  test("holds the streamed input while it grows", () => {
    const state = new ChatState();
    const seen = [];
    for (const event of TOOL_RUN.slice(0, 7)) {
      state.apply(event);
      seen.push(JSON.stringify(state.calls.get("c1")?.value));
    }
    assert.deepEqual(seen.slice(3), [undefined, '{"text":"wa"}', '{"text":"water"}', '{"text":"water"}']);
    assert.equal(state.calls.get("c1").note, "input complete");
    assert.equal(state.activeRunId, "r1");
  });
});

describe("duplicates and replays", () => {
  const cases = [
    ["every event twice", TOOL_RUN.flatMap((event) => [event, event])],
    ["a replay from the start after the end", [...TOOL_RUN, ...TOOL_RUN]],
    ["a reconnect replaying from seq 5", [...TOOL_RUN.slice(0, 8), ...TOOL_RUN.slice(4)]],
  ];
  for (const [name, events] of cases) {
    test(`${name} changes nothing more`, () => {
      const { state, changes } = play(events);
      assert.deepEqual(snapshot(state), EXPECTED_TOOL_RUN);
      const drawn = (lists) => lists.map(types).filter((list) => list.length);
      assert.deepEqual(drawn(changes), drawn(play(TOOL_RUN).changes));
      assert.equal(state.lastSeq, TOOL_RUN.length);
    });
  }
});

// The stream (lib/stream.js) in front of the model, as on the page: out of order live
// events wait while the gap is fetched from the events endpoint.
async function throughStream(live, stored, { after = 0 } = {}) {
  const state = new ChatState();
  const fetched = [];
  const fetchImpl = async (url) => {
    const from = Number(new URL(url, "http://studio.test/").searchParams.get("after"));
    fetched.push(from);
    return { ok: true, json: async () => stored.filter((event) => event.seq > from) };
  };
  const stream = new ThreadStream({
    wsUrl: "ws://unused/", eventsUrl: "/api/threads/t/events/", onEvent: (event) => state.apply(event),
    fetchImpl, WebSocketImpl: class {}, after, minDelay: 5,
  });
  for (const event of live) stream.ingest(event);
  for (let i = 0; i < 100 && (stream.hasGap || stream.filling); i++) await new Promise((r) => setTimeout(r, 5));
  return { state, fetched };
}

describe("through the stream", () => {
  test("a gap filled out of order gives the same conversation", async () => {
    const live = [1, 2, 3, 9, 7, 8, 4, 10, 11, 12].map((seq) => TOOL_RUN[seq - 1]);
    const { state, fetched } = await throughStream(live, TOOL_RUN);
    assert.deepEqual(snapshot(state), EXPECTED_TOOL_RUN);
    assert.deepEqual(fetched, [3]);
  });

  test("a reconnect that replays what was seen gives the same conversation", async () => {
    const live = [...TOOL_RUN.slice(0, 6), ...TOOL_RUN.slice(2)];
    const { state, fetched } = await throughStream(live, TOOL_RUN);
    assert.deepEqual(snapshot(state), EXPECTED_TOOL_RUN);
    assert.deepEqual(fetched, []);
  });
});

describe("suspended calls", () => {
  const ASK = numbered([
    { type: "run-start", runId: "r1", message: "Ask me" },
    { type: "tool-call", runId: "r1", toolCallId: "q1", toolName: "ask_user", input: { question: "Which city?" } },
    { type: "tool-call-suspended", runId: "r1", toolCallId: "q1", toolName: "ask_user",
      suspendPayload: { kind: "ask-user", question: "Which city?" } },
    { type: "run-finish", runId: "r1", status: "suspended" },
    { type: "tool-call-resumed", runId: "r1", toolCallId: "q1", resumePayload: { answer: "Lisbon" } },
    { type: "tool-result", runId: "r1", toolCallId: "q1", toolName: "ask_user", output: { answer: "Lisbon" } },
    { type: "run-finish", runId: "r1", finishReason: "stop" },
  ]);

  const steps = [
    // after event n: run status, call status, widget, suspended ids, active run
    [3, "suspended", "suspended", "form", ["q1"], "r1"],
    [4, "suspended", "suspended", "form", ["q1"], "r1"],
    [5, "running", "running", "answered", [], "r1"],
    [6, "running", "completed", "answered", [], "r1"],
    [7, "completed", "completed", "answered", [], null],
  ];
  for (const [n, run, call, widget, suspended, active] of steps) {
    test(`after event ${n}: run ${run}, call ${call}`, () => {
      const { state } = play(ASK.slice(0, n));
      const model = snapshot(state);
      assert.equal(model.runs[0].status, run);
      assert.equal(model.calls[0].status, call);
      assert.equal(model.calls[0].widget, widget);
      assert.deepEqual(model.suspended, suspended);
      assert.equal(model.activeRunId, active);
    });
  }

  test("the widget knows the question and the answer given elsewhere", () => {
    const { state } = play(ASK.slice(0, 5));
    assert.deepEqual(state.calls.get("q1").widget, {
      kind: "answered", suspendKind: "ask", payload: { answer: "Lisbon" },
      question: { kind: "ask-user", question: "Which city?" },
    });
    assert.equal(state.calls.get("q1").note, "resumed");
  });

  test("an answer given on this page shows at once and is not replaced", () => {
    const state = new ChatState();
    ASK.slice(0, 3).forEach((event) => state.apply(event));
    const local = state.apply({ type: "local-resumed", toolCallId: "q1", payload: { answer: "Porto" } });
    assert.deepEqual(types(local), ["call:widget", "call:status"]);
    assert.equal(state.calls.get("q1").status, "resuming");
    const resumed = state.apply(ASK[4]);
    assert.ok(!types(resumed).includes("call:widget"));
    assert.deepEqual(state.calls.get("q1").widget.payload, { answer: "Porto" });
  });

  test("with auto-resume the next message answers the call", () => {
    const { state } = play(ASK.slice(0, 3), { autoResume: true });
    assert.deepEqual(state.autoResumeTarget(), {
      id: "q1", runId: "r1", kind: "ask", autoResume: true, toolName: "ask_user",
      payload: { kind: "ask-user", question: "Which city?" },
    });
    assert.equal(play(ASK.slice(0, 3)).state.autoResumeTarget(), null);
  });

  test("a browser function is handed to the page, then shows what it returned", () => {
    const { state, changes } = play(numbered([
      { type: "run-start", runId: "r1", message: "Clock" },
      { type: "tool-call-suspended", runId: "r1", toolCallId: "k1", toolName: "clock",
        suspendPayload: { kind: "client-function", function: "local_time" } },
    ]));
    assert.deepEqual(types(changes[1]), ["call:created", "call:status", "call:widget", "run-status", "client-call"]);
    assert.equal(state.runs.get("r1").detail, "Waiting for the browser function");
    assert.equal(state.calls.get("k1").widget.text, 'Runs the browser function "local_time"…');
    state.apply({ type: "local-client-result", toolCallId: "k1", name: "local_time", result: { output: { h: 9 } } });
    assert.deepEqual(state.calls.get("k1").widget, { kind: "note", tone: "ok", text: 'Browser function local_time returned {\n  "h": 9\n}' });
  });
});

describe("errors, hidden input and hooks", () => {
  test("a tool error keeps its message and paths, and drops an open question", () => {
    const { state } = play(numbered([
      { type: "run-start", runId: "r1", message: "x" },
      { type: "tool-call-suspended", runId: "r1", toolCallId: "a1", toolName: "weather",
        suspendPayload: { kind: "approval", input: { city: "Sydney" } } },
      { type: "tool-error", runId: "r1", toolCallId: "a1", toolName: "weather", error: "Invalid input",
        errors: [{ path: "$.city", message: "too short" }] },
    ]));
    const call = state.calls.get("a1");
    assert.equal(call.status, "failed");
    assert.deepEqual(call.outcome, { kind: "error", error: "Invalid input", errors: [{ path: "$.city", message: "too short" }] });
    assert.equal(call.widget, null);
    assert.deepEqual([...state.suspended.keys()], []);
  });

  test("an input hidden by its display transform is never held", () => {
    const { state, changes } = play(numbered([
      { type: "run-start", runId: "r1", message: "x" },
      { type: "tool-input-start", runId: "r1", toolCallId: "s1", toolName: "secret" },
      { type: "tool-input-delta", runId: "r1", toolCallId: "s1", argsTextDelta: '{"pin": "12',
        patches: [{ op: "set", path: [], value: { pin: "12" } }] },
      { type: "tool-input-delta", runId: "r1", toolCallId: "s1", hidden: true },
      { type: "tool-input-delta", runId: "r1", toolCallId: "s1", argsTextDelta: '34"}',
        patches: [{ op: "append", path: ["pin"], value: "34" }] },
      { type: "tool-call", runId: "r1", toolCallId: "s1", toolName: "secret", hidden: true },
      { type: "tool-result", runId: "r1", toolCallId: "s1", toolName: "secret", hidden: true },
    ]));
    const call = state.calls.get("s1");
    assert.equal(call.hidden, true);
    assert.equal(call.value, undefined);
    assert.deepEqual(call.outcome, { kind: "result", output: undefined, modelOutput: undefined, durationMs: undefined, hidden: true });
    assert.deepEqual(types(changes[4]), ["call:raw"]); // patches after the transform failed: ignored
  });

  test("a hook decision reported twice is kept once", () => {
    const decision = { hook: "before_tool_call", source: "agent", proceed: false, reason: "off" };
    const { state } = play(numbered([
      { type: "run-start", runId: "r1", message: "x" },
      { type: "tool-hook", runId: "r1", toolCallId: "u1", toolName: "unit_convert", ...decision },
      { type: "tool-result", runId: "r1", toolCallId: "u1", toolName: "unit_convert", skipped: true,
        output: { value: 0 }, hookDecisions: [decision] },
    ]));
    const call = state.calls.get("u1");
    assert.equal(call.hooks.length, 1);
    assert.equal(call.status, "skipped");
    assert.deepEqual(call.outcome, { kind: "skipped", output: { value: 0 } });
  });

  const endings = [
    [{ type: "run-error", runId: "r1", error: { message: "The model provider failed" } }, "failed", "Run failed: The model provider failed"],
    [{ type: "run-error", runId: "r1", code: "aborted" }, "aborted", "Stopped"],
    [{ type: "run-finish", runId: "r1", finishReason: "superseded" }, "aborted", "Closed: a new message was sent instead of an answer"],
    [{ type: "run-finish", runId: "r1", status: "aborted" }, "aborted", ""],
    [{ type: "run-finish", runId: "r1", status: "aborted", finishReason: "stopped" }, "aborted", "Stopped while waiting for an answer"],
  ];
  for (const [event, status, detail] of endings) {
    test(`${event.type} ${JSON.stringify(event.error ?? event.code ?? event.finishReason ?? event.status)} ends the run ${status}`, () => {
      const { state } = play(numbered([{ type: "run-start", runId: "r1", message: "x" }, event]));
      assert.equal(state.runs.get("r1").status, status);
      assert.equal(state.runs.get("r1").detail, detail);
      assert.equal(state.activeRun, null);
    });
  }
});

describe("a card that joins late", () => {
  // Opened with ?since=: the call's start came before the first event seen.
  const LATE = [
    { seq: 10, type: "tool-input-delta", runId: "r1", toolCallId: "n1", toolName: "save_note",
      patches: [{ op: "append", path: ["text"], value: "ter " }] },
    { seq: 11, type: "tool-input-delta", runId: "r1", toolCallId: "n1",
      patches: [{ op: "append", path: ["text"], value: "the " }] },
  ];

  test("asks for the partial value once, then applies only the newer deltas", () => {
    const state = new ChatState();
    assert.deepEqual(types(state.apply(LATE[0])), ["run", "run-status", "call:created", "ask-partial"]);
    state.apply({ type: "local-partial-asked", toolCallId: "n1" });
    assert.deepEqual(types(state.apply(LATE[1])), []);
    assert.deepEqual(state.unaskedLateCalls(), []);
    // The server's value already holds seq 10; seq 11 and later apply on top of it.
    const partial = state.apply({ type: "partial", toolCallId: "n1", value: { text: "Remember to water " }, asOf: 10 });
    assert.deepEqual(types(partial), ["call:input"]);
    assert.deepEqual(state.calls.get("n1").value, { text: "Remember to water the " });
    state.apply({ seq: 12, type: "tool-input-delta", runId: "r1", toolCallId: "n1", patches: [{ op: "append", path: ["text"], value: "basil" }] });
    assert.deepEqual(state.calls.get("n1").value, { text: "Remember to water the basil" });
    assert.equal(state.runs.get("r1").status, "running");
  });

  test("a late call nobody asked for is listed for the next connection", () => {
    const state = new ChatState();
    state.apply(LATE[0]);
    assert.deepEqual(state.unaskedLateCalls().map((call) => call.id), ["n1"]);
  });
});

describe("messages, tasks and signals", () => {
  test("a message sent from the page binds to the next run, or fails", () => {
    const state = new ChatState();
    state.apply({ type: "local-message", text: "first" });
    assert.equal(state.awaitingRun, true);
    state.apply({ seq: 1, type: "run-start", runId: "r1" });
    state.apply({ type: "local-message", text: "second" });
    state.apply({ type: "error", message: "Too long" });
    state.apply({ type: "local-message", text: "third" });
    state.apply({ type: "local-send-failed" });
    assert.deepEqual(snapshot(state).messages, [
      { text: "first", runId: "r1", status: "sent" },
      { text: "second", runId: null, status: "failed" },
      { text: "third", runId: null, status: "failed" },
    ]);
    assert.equal(state.awaitingRun, false);
  });

  test("a history run gets its user text from the messages endpoint", () => {
    const state = new ChatState();
    state.userTextByRun.set("r1", "from the history");
    state.apply({ seq: 1, type: "run-start", runId: "r1" });
    assert.equal(state.messages[0].text, "from the history");
  });

  test("the task list is normalized", () => {
    const { state } = play([{ seq: 1, type: "task-list", tasks: [
      { id: 1, title: "Plan", status: "In Progress" }, { id: 2, content: "Dig", status: "completed" }, { id: 3 },
    ] }]);
    assert.deepEqual(state.tasks, [
      { id: 1, title: "Plan", status: "in_progress" },
      { id: 2, title: "Dig", status: "completed" },
      { id: 3, title: "3", status: "pending" },
    ]);
  });

  test("signals join their run, or the conversation; the inbox may draw them instead", () => {
    const events = numbered([
      { type: "run-start", runId: "r1", message: "x" },
      { type: "signal", runId: "r1", tagName: "notification", content: "Build failed" },
      { type: "signal", signalType: "digest", attributes: { count: 3 } },
    ]);
    const { state } = play(events);
    assert.deepEqual(snapshot(state).runs[0].parts, ["signal:notification"]);
    assert.deepEqual(snapshot(state).timeline, ["m1", "r1", "digest"]);
    assert.deepEqual(state.timeline[2].content, { count: 3 });
    const withInbox = play(events, { inlineSignals: false }).state;
    assert.deepEqual(snapshot(withInbox).timeline, ["m1", "r1"]);
  });

  test("a call waiting for a sandbox slot says so, then runs and completes", () => {
    const why = "Waiting for a sandbox slot: your runs hold your share of 2 at once; this one starts when one of them ends.";
    const { state, changes } = play(numbered([
      { type: "run-start", runId: "r1", message: "x" },
      { type: "tool-call", runId: "r1", toolCallId: "w1", toolName: "py_double", input: { n: 21 } },
      { type: "tool-call-waiting", runId: "r1", toolCallId: "w1", toolName: "py_double", note: why },
      { type: "tool-call-waiting", runId: "r1", toolCallId: "w1", toolName: "py_double", note: null },
      { type: "tool-result", runId: "r1", toolCallId: "w1", toolName: "py_double", output: { double: 42 } },
    ]));
    const call = state.calls.get("w1");
    assert.deepEqual([types(changes[2]), types(changes[3])], [["call:status"], ["call:status"]]);
    assert.equal(call.status, "completed");
    assert.equal(call.note, null);
    const waiting = play(numbered([
      { type: "run-start", runId: "r1", message: "x" },
      { type: "tool-call", runId: "r1", toolCallId: "w1", toolName: "py_double", input: { n: 21 } },
      { type: "tool-call-waiting", runId: "r1", toolCallId: "w1", toolName: "py_double", note: why },
    ])).state.calls.get("w1");
    assert.deepEqual([waiting.status, waiting.note, waiting.noteDetail], ["running", "waiting for a sandbox slot", why]);
  });

  test("an async result completes a call that went pending", () => {
    const { state } = play(numbered([
      { type: "run-start", runId: "r1", message: "x" },
      { type: "tool-call", runId: "r1", toolCallId: "p1", toolName: "add", input: { a: 1 } },
      { type: "tool-call-pending", runId: "r1", toolCallId: "p1", toolName: "add" },
      { type: "run-finish", runId: "r1", finishReason: "stop" },
      { type: "tool-result", runId: "r2", toolCallId: "p1", toolName: "add", output: { sum: 2 } },
    ]));
    const call = state.calls.get("p1");
    assert.equal(call.wasPending, true);
    assert.equal(call.status, "completed");
    assert.equal(call.runId, "r1");
    assert.deepEqual([...state.runs.keys()], ["r1"]);
  });
});

test("Stop on a pending question closes its form and says it was stopped", () => {
  const { state } = play(numbered([
    { type: "run-start", runId: "r1", message: "ask me" },
    { type: "tool-input-start", runId: "r1", toolCallId: "q1", toolName: "ask_user" },
    { type: "tool-call", runId: "r1", toolCallId: "q1", toolName: "ask_user", input: { question: "Which city?" } },
    { type: "tool-call-suspended", runId: "r1", toolCallId: "q1", toolName: "ask_user", suspendPayload: { kind: "ask-user", question: "Which city?" } },
    { type: "tool-error", runId: "r1", toolCallId: "q1", toolName: "ask_user", error: "Stopped: the run was stopped before this was answered." },
    { type: "run-finish", runId: "r1", status: "aborted", finishReason: "stopped" },
  ]));
  const call = state.calls.get("q1");
  assert.equal(call.status, "failed");
  assert.match(call.outcome.error, /^Stopped/);
  assert.notEqual(call.widget?.kind, "form");
  assert.equal(state.runs.get("r1").status, "aborted");
  assert.equal(state.runs.get("r1").detail, "Stopped while waiting for an answer");
});
