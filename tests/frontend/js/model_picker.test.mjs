// The model picker's pure parts (frontend/static/js/model_picker.js): how a model's context
// window and price read, and which of the user's OpenAI-compatible servers it offers.

import assert from "node:assert/strict";
import { test } from "node:test";

import { formatPrice, formatTokens, serverEntries } from "../../../frontend/static/js/model_picker.js";

test("a context window reads in tokens, thousands or millions", () => {
  assert.equal(formatTokens(null), "");
  assert.equal(formatTokens(512), "512 tokens");
  assert.equal(formatTokens(128000), "128k tokens");
  assert.equal(formatTokens(1048576), "1M tokens");
  assert.equal(formatTokens(2500000), "2.5M tokens");
});

test("a price reads per million tokens in and out, unknown halves as ?", () => {
  assert.equal(formatPrice({ input_cost_per_million: 0.15, output_cost_per_million: 0.6 }), "$0.15 / $0.6 per 1M in/out");
  assert.equal(formatPrice({ input_cost_per_million: 3, output_cost_per_million: null }), "$3 / ? per 1M in/out");
  assert.equal(formatPrice({ input_cost_per_million: null, output_cost_per_million: null }), "");
});

test("the user's servers are offered by the name typed before the slash", () => {
  const providers = [{ id: "openai", servers: undefined }, { id: "openai_compatible", servers: ["box", "lab-vllm"] }];
  assert.deepEqual(serverEntries(providers, "").map((e) => e.model), ["box/", "lab-vllm/"]);
  assert.deepEqual(serverEntries(providers, "lab").map((e) => e.model), ["lab-vllm/"]);
  assert.deepEqual(serverEntries(providers, "box/llama3").map((e) => e.model), ["box/"]);
  assert.deepEqual(serverEntries(providers, "gpt-4o"), []);
  assert.deepEqual(serverEntries([], "box"), []);
});
