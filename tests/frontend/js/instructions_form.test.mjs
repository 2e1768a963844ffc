// The structured instructions editor's model (frontend/static/js/lib/instructions_form.js).

import assert from "node:assert/strict";
import { test } from "node:test";

import { blocksOf, formOf, instructionsFrom } from "../../../frontend/static/js/lib/instructions_form.js";

const CACHE = { anthropic: { cacheControl: { type: "ephemeral" } } };

test("each of the four forms is recognised", () => {
  assert.equal(formOf("Be brief."), "text");
  assert.equal(formOf(["A.", "B."]), "list");
  assert.equal(formOf({ role: "system", content: "A." }), "messages");
  assert.equal(formOf([{ role: "system", content: "A." }]), "messages");
  assert.equal(formOf([{ role: "system", content: "A.", providerOptions: CACHE }]), "options");
});

test("every form survives the trip through blocks", () => {
  const cases = [
    ["text", "Be brief."],
    ["list", ["A.", "B."]],
    ["messages", [{ role: "system", content: "A." }, { role: "system", content: "B." }]],
    ["options", [{ role: "system", content: "A.", providerOptions: CACHE }, { role: "system", content: "B." }]],
  ];
  for (const [form, value] of cases) assert.deepEqual(instructionsFrom(form, blocksOf(value)), value, form);
});

test("switching forms keeps the text of every block", () => {
  const blocks = blocksOf(["A.", "B."]);
  assert.equal(instructionsFrom("text", blocks), "A.\n\nB.");
  assert.deepEqual(instructionsFrom("messages", blocks), [
    { role: "system", content: "A." },
    { role: "system", content: "B." },
  ]);
});

test("provider options that are not a JSON object name their block", () => {
  const blocks = [{ content: "A.", providerOptions: "" }, { content: "B.", providerOptions: "[1]" }];
  assert.throws(() => instructionsFrom("options", blocks), /Block 2: provider options must be a JSON object/);
  blocks[1].providerOptions = "{nope";
  assert.throws(() => instructionsFrom("options", blocks), /Block 2: provider options are not valid JSON/);
});
