// The agent editor's values, save bodies and merges (frontend/static/js/lib/agent_values.js,
// merge.js, line_diff.js), without a browser.

import assert from "node:assert/strict";
import { describe, test } from "node:test";

import {
  addToolProblem, dirtyFields, reapplyEdit, savePayload, toolBadge, valuesOf,
} from "../../../frontend/static/js/lib/agent_values.js";
import { lineDiff } from "../../../frontend/static/js/lib/line_diff.js";
import { merge3 } from "../../../frontend/static/js/lib/merge.js";

const CODE_AGENT = {
  version: 4, source: "code", name: "Weather", model: "studio/scripted", description: "",
  instructions: { effective: "Be brief.", code: "Be brief.", overridden: false },
  tools: [
    { key: "lookup", tool: "weather_lookup", origin: "code", active: true, description: "Looks up.", code_description: "Looks up." },
    { key: "convert", tool: "unit_convert", origin: "code", active: true, description: "Converts.", code_description: "Converts." },
  ],
};

function edit(state, change, pending = {}) {
  const base = valuesOf(state);
  const values = structuredClone(base);
  change(values);
  return { state, base, values, pending };
}

describe("saving only what changed", () => {
  test("nothing changed: only the version", () => {
    const form = edit(CODE_AGENT, () => {});
    assert.deepEqual(dirtyFields(form), []);
    assert.deepEqual(savePayload(form), { version: 4 });
  });

  test("a code agent stores its tool changes as a delta from code", () => {
    const form = edit(CODE_AGENT, (values) => {
      values.instructions = "Be very brief.";
      values.active.convert = false;
      values.active.dictionary = true;
      values.descriptions.lookup = "  Looks up.  ";
      values.descriptions.dictionary = "Words.";
    }, { dictionary: { tool: "dictionary", description: "Words." } });
    assert.deepEqual(dirtyFields(form), ["instructions", "desc:dictionary", "active:convert", "add:dictionary"]);
    assert.deepEqual(savePayload(form), {
      version: 4,
      instructions: "Be very brief.",
      tool_descriptions: { dictionary: null },
      tools_removed: ["convert"],
      tools_added: { dictionary: "dictionary" },
    });
  });

  test("a tool added in the studio and switched off is dropped, not removed from code", () => {
    const state = structuredClone(CODE_AGENT);
    state.tools.push({ key: "words", tool: "dictionary", origin: "added", active: true, description: "", code_description: "" });
    const form = edit(state, (values) => { values.active.words = false; });
    assert.deepEqual(savePayload(form), { version: 4, tools_removed: [], tools_added: {} });
  });

  test("a description back to the code text clears the override", () => {
    const state = structuredClone(CODE_AGENT);
    Object.assign(state.tools[0], { description: "Finds the weather.", overridden: true });
    const form = edit(state, (values) => { values.descriptions.lookup = "Looks up."; });
    assert.deepEqual(savePayload(form), { version: 4, tool_descriptions: { lookup: null } });
  });

  test("a studio agent saves its fields and its whole tool set", () => {
    const state = { ...structuredClone(CODE_AGENT), source: "studio" };
    const form = edit(state, (values) => {
      values.name = "Forecaster";
      values.active.lookup = false;
    });
    assert.deepEqual(savePayload(form), { version: 4, name: "Forecaster", tools: { convert: "unit_convert" } });
  });

  test("JSON instructions are sent as JSON, and bad JSON is refused", () => {
    const state = structuredClone(CODE_AGENT);
    state.instructions.effective = [{ role: "system", content: "Be brief." }];
    const form = edit(state, (values) => { values.instructions = '[{"role": "system", "content": "Hi"}]'; });
    assert.equal(form.base.format, "json");
    assert.deepEqual(savePayload(form).instructions, [{ role: "system", content: "Hi" }]);
    form.values.instructions = "[{";
    assert.throws(() => savePayload(form), SyntaxError);
  });
});

test("tool rows: badges and the keys a new tool may take", () => {
  assert.deepEqual(toolBadge({ origin: "new", active: true }, "code"), ["New · not saved yet", "badge-new"]);
  assert.deepEqual(toolBadge({ origin: "code", active: false }, "code"), ["Removed", "badge-locked"]);
  assert.deepEqual(toolBadge({ origin: "code", active: true, overridden: true }, "code"), ["Overridden", "badge-overridden"]);
  assert.deepEqual(toolBadge({ origin: "code", active: true, overridden: true }, "studio"), ["", ""]);
  const problem = (name, key) => addToolProblem({ state: CODE_AGENT, pending: { words: {} }, name, key });
  assert.equal(problem("", "x"), "Choose a tool.");
  assert.equal(problem("dictionary", "no spaces"), "A key uses letters, digits, _ and -.");
  assert.equal(problem("dictionary", "lookup"), "The agent already has a tool named lookup.");
  assert.equal(problem("dictionary", "words"), "The agent already has a tool named words.");
  assert.equal(problem("dictionary", "dictionary"), "");
});

describe("re-applying an edit onto a newer version", () => {
  const BASE = "one\ntwo\nthree\nfour";
  const cases = [
    ["different lines keep both", "one\n2\nthree\nfour", "one\ntwo\nthree\nfour\nfive", "one\n2\nthree\nfour\nfive", true],
    ["the same edit on both sides is made once", "one\n2\nthree\nfour", "one\n2\nthree\nfour", "one\n2\nthree\nfour", true],
    ["the same lines changed differently: mine wins", "one\n2\nthree\nfour", "one\nTWO\nthree\nfour", "one\n2\nthree\nfour", false],
    ["no edit of mine: theirs", BASE, "zero\n" + BASE, "zero\n" + BASE, true],
  ];
  for (const [name, mine, theirs, text, clean] of cases) {
    test(name, () => assert.deepEqual(reapplyEdit(BASE, mine, theirs), { text, clean }));
  }

  test("merge3 returns null on a conflict", () => {
    assert.equal(merge3("a\nb", "a\nB", "a\nβ"), null);
    assert.equal(merge3("a\nb\nc", "A\nb\nc", "a\nb\nC"), "A\nb\nC");
  });

  test("line diffs number both sides", () => {
    assert.deepEqual(lineDiff("a\nb\nc", "a\nB\nc"), [
      { op: "equal", old: 1, new: 1, text: "a" },
      { op: "insert", old: null, new: 2, text: "B" },
      { op: "delete", old: 2, new: null, text: "b" },
      { op: "equal", old: 3, new: 3, text: "c" },
    ]);
  });
});
