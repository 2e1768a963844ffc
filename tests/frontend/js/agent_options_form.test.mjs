// The default-options section's model (frontend/static/js/lib/agent_options_form.js).

import assert from "node:assert/strict";
import { test } from "node:test";

import { formOfOptions, optionsOfForm } from "../../../frontend/static/js/lib/agent_options_form.js";

test("options survive the trip through the form, unknown keys included", () => {
  const options = {
    maxSteps: 4,
    toolChoice: { type: "tool", toolName: "ask" },
    activeTools: ["ask"],
    autoResume: true,
    temperature: 0.2,
    modelSettings: { max_tokens: 200 },
    lastMessages: 20,
    generateTitle: false,
    custom: "kept",
  };
  assert.deepEqual(optionsOfForm(formOfOptions(options), options), options);
  assert.deepEqual(optionsOfForm(formOfOptions({}), {}), {});
});

test("an empty field drops its option and a bad one names itself", () => {
  const form = formOfOptions({ maxSteps: 4, temperature: 1 });
  form.maxSteps = "";
  assert.deepEqual(optionsOfForm(form, { maxSteps: 4, temperature: 1 }), { temperature: 1 });
  form.maxSteps = "four";
  assert.throws(() => optionsOfForm(form), /maxSteps: not a number/);
  form.maxSteps = "";
  form.modelSettings = "{oops";
  assert.throws(() => optionsOfForm(form), /modelSettings: not valid JSON/);
});
