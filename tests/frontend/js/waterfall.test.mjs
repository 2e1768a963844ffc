// The trace page's waterfall as data (traces/static/traces/waterfall.js).

import assert from "node:assert/strict";
import { test } from "node:test";

import { details, layout } from "../../../traces/static/traces/waterfall.js";

const at = (ms) => new Date(Date.parse("2026-03-10T12:00:00Z") + ms).toISOString();
const span = (id, parent, start, end, extra = {}) => ({ id, parent, start: at(start), end: end === null ? null : at(end), kind: "tool", attributes: {}, ...extra });

test("rows come in tree order, each after its parent, siblings by start", () => {
  const spans = [
    span("b", "root", 600, 900), span("root", null, 0, 1000, { kind: "run" }),
    span("a", "root", 100, 500), span("a1", "a", 200, 300),
  ];
  const { rows, totalMs } = layout(spans);
  assert.deepEqual(rows.map((row) => [row.span.id, row.depth]), [["root", 0], ["a", 1], ["a1", 2], ["b", 1]]);
  assert.equal(totalMs, 1000);
  assert.deepEqual(rows.map((row) => [row.offset, row.width]), [[0, 100], [10, 40], [20, 10], [60, 30]]);
});

test("an open span reaches to now, and a span whose parent is missing is a root", () => {
  const now = Date.parse(at(2000));
  const { rows, totalMs } = layout([span("root", null, 0, 1000), span("wait", "root", 500, null), span("x", "gone", 100, 200)], now);
  assert.equal(totalMs, 2000);
  const wait = rows.find((row) => row.span.id === "wait");
  assert.equal(wait.open, true);
  assert.equal(wait.width, 75);
  assert.equal(rows.find((row) => row.span.id === "x").depth, 0);
});

test("details show a model call's facts and its messages, in order", () => {
  const model = { kind: "model", attributes: { messages: [{ role: "user", content: "hi" }], input_tokens: 3, finish_reason: "stop", cost_usd: null } };
  const { facts, sections } = details(model);
  assert.deepEqual(facts, [["input_tokens", 3], ["finish_reason", "stop"]]);
  assert.deepEqual(sections.map(([label]) => label), ["Messages"]);
});
